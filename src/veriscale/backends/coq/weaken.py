"""Flawed specifications for Coq: the ground-truth postcondition with one top-level
``&&`` conjunct dropped."""

from __future__ import annotations

from veriscale.backends.coq.lexer import split_conjuncts
from veriscale.backends.coq.sections import coq_sections
from veriscale.backends.language import Weakening
from veriscale.benchmark.model import Task


def weakened_postconditions(task: Task) -> list[Weakening]:
    """GT postcondition with each top-level conjunct dropped, and with all dropped."""
    coq = coq_sections(task)
    if coq is None or not coq.postcond.strip():
        return []
    parts = split_conjuncts(coq.postcond)
    out: list[Weakening] = []
    if len(parts) > 1:
        for k in range(len(parts)):
            rest = parts[:k] + parts[k + 1:]
            out.append(Weakening(f"drop:{k + 1}", " && ".join(f"({p})" for p in rest)))
    out.append(Weakening("drop-all", "true"))
    return out
