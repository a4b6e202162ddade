"""A task's Python text: the sections of a Python-spec ``task.py``, and that file
written back from them."""

from __future__ import annotations

from dataclasses import dataclass

from veriscale.benchmark.model import Task

SECTIONS = ("aux", "precondition", "reference", "postcondition")
"""The sections of a ``task.py``, in their order."""

LANGUAGE = "python"
"""The key of a task's Python sections (``Task.sections``)."""


@dataclass
class PythonSections:
    """The sections of a Python-spec ``task.py``."""

    aux: str = ""
    precondition: str = ""
    reference: str = ""
    postcondition: str = ""
    source: str = ""

    def identity(self) -> str:
        """What a task's fingerprint holds of these sections: the file as read, or as
        written when built in memory."""
        return self.source or render_sections(self)


def python_sections(task: Task) -> PythonSections | None:
    """``task``'s Python sections, if it has them."""
    got = task.section(LANGUAGE)
    return got if isinstance(got, PythonSections) else None


def render_sections(sections: PythonSections) -> str:
    """``task.py`` text for ``sections`` (the inverse of :func:`split_sections`)."""
    parts = []
    for name in SECTIONS:
        body = getattr(sections, name).strip("\n")
        parts.append(f"# veriscale: {name}\n{body}\n" if body else f"# veriscale: {name}\n")
    return "\n\n".join(parts)
