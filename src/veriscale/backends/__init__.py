"""Oracles: the backend interface and its implementations (Lean, Python)."""

from veriscale.backends.base import (
    Backend,
    BackendStats,
    Classification,
    Implementation,
    Label,
    Outcome,
    Spec,
    Verdict,
)

__all__ = [
    "Backend", "BackendStats", "Classification", "Implementation", "Label", "Outcome",
    "Spec", "Verdict",
]
