"""A task's Coq text: VERINA's marked sections of ``task.v``, with Coq's defaults."""

from __future__ import annotations

from dataclasses import dataclass

from veriscale.benchmark.model import Task
from veriscale.benchmark.verina.sections import VerinaSections

LANGUAGE = "coq"
"""The key of a task's Coq sections (``Task.sections``)."""


@dataclass
class CoqSections(VerinaSections):
    """The marked sections of a VERINA ``task.v`` (bodies verbatim), with Coq's defaults."""

    precond: str = "true"
    proof: str = "admit."


def coq_sections(task: Task) -> CoqSections | None:
    """``task``'s Coq sections, if it has them."""
    got = task.section(LANGUAGE)
    return got if isinstance(got, CoqSections) else None
