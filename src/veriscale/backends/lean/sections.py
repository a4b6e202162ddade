"""A task's Lean text: VERINA's marked sections of ``task.lean``, with Lean's defaults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from veriscale.benchmark.model import Task
from veriscale.benchmark.verina.sections import VerinaSections

LANGUAGE = "lean"
"""The key of a task's Lean sections (``Task.sections``)."""


@dataclass
class LeanSections(VerinaSections):
    """The marked sections of a VERINA ``task.lean``, with Lean's defaults."""

    precond: str = "True"
    proof: str = "sorry"

    def identity(self) -> Any:
        """The file as read (as fingerprints always held it); every field for a task
        built in memory, which has none (two such tasks shared one key before)."""
        return self.source or super().identity()


def lean_sections(task: Task) -> LeanSections | None:
    """``task``'s Lean sections, if it has them."""
    got = task.section(LANGUAGE)
    return got if isinstance(got, LeanSections) else None
