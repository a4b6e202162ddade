"""The one reader of VERINA's marked task files (``task.lean``, ``task.v``).

Both tracks cut a task file at line-based markers ``!benchmark @start <name> [k=v]``
/ ``!benchmark @end <name>``; only the comment syntax around the marker differs,
so each format passes a ``find`` that recognises its marker line. Bodies are kept
verbatim (every line with a trailing newline); blank sections keep the defaults of
the format's sections object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar


@dataclass
class VerinaSections:
    """The marked sections of a VERINA task file (bodies, as VERINA stores them): one
    model for every prover track, as VERINA's own, with each language's defaults in
    its plug-in (a subclass: ``LeanSections``, ``CoqSections``)."""

    task_imports: str = ""
    solution_imports: str = ""
    task_aux: str = ""
    solution_aux: str = ""
    precond_aux: str = ""
    precond: str = ""
    code_aux: str = ""
    code: str = ""
    postcond_aux: str = ""
    postcond: str = ""
    proof_aux: str = ""
    proof: str = ""
    source: str = ""  # the whole file as read, for byte-exact writing

    def identity(self) -> Any:
        """What a task's fingerprint holds of these sections (every field)."""
        return dataclasses.asdict(self)


BODY_SECTIONS = (
    "task_aux", "solution_aux", "precond_aux", "precond", "code_aux", "code",
    "postcond_aux", "postcond", "proof_aux", "proof",
)
"""Section names VERINA knows besides ``import``; each is a :class:`VerinaSections` field."""

IMPORT_FIELDS = {"task": "task_imports", "solution": "solution_imports"}
"""``import type=...`` sections kept; VERINA ignores ``llm`` and ``test`` too."""

SECTION_FIELDS = tuple(f.name for f in dataclasses.fields(VerinaSections) if f.name != "source")
"""Every field but the file as read."""


Marker = tuple[str, list[str], str]
"""(verb such as ``@start``, the words after it, the text an error shows for the marker)."""

MarkerFinder = Callable[[str], "Marker | None"]
S = TypeVar("S")


class SectionError(ValueError):
    """A task file whose markers VERINA's parser would reject."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class MarkedSection:
    """One ``@start``/``@end`` block: its name, its ``k=v`` arguments and body."""

    name: str
    args: tuple[tuple[str, str], ...]
    body: str
    line: int  # 1-based line of the @start marker

    def arg(self, key: str) -> str | None:
        return dict(self.args).get(key)


def split_sections(text: str, find: MarkerFinder) -> list[MarkedSection]:
    """The marked blocks of a task file, in order; raise :class:`SectionError` for
    nesting, an unmatched or unclosed marker, or a marker that is neither ``@start``
    nor ``@end``."""
    out: list[MarkedSection] = []
    current: tuple[str, tuple[tuple[str, str], ...], int] | None = None
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        marker = find(line)
        if marker is None:
            if current is not None:
                body.append(line + "\n")
            continue
        verb, words, shown = marker
        if verb == "@start":
            if not words:
                raise SectionError(number, "@start marker without a section name")
            if current is not None:
                raise SectionError(number, f"section {words[0]!r} opened inside {current[0]!r}")
            args = tuple((k, v) for k, _, v in (w.partition("=") for w in words[1:] if "=" in w))
            current, body = (words[0], args, number), []
        elif verb == "@end":
            name = words[0] if words else ""
            if current is None or name != current[0]:
                open_name = current[0] if current else None
                raise SectionError(number, f"@end {name!r} does not close {open_name!r}")
            out.append(MarkedSection(current[0], current[1], "".join(body), current[2]))
            current = None
        else:
            raise SectionError(number, f"unknown benchmark marker {shown!r}")
    if current is not None:
        raise SectionError(current[2], f"section {current[0]!r} is never closed")
    return out


def read_sections(sections: S, marked: Iterable[MarkedSection], body_sections: Iterable[str],
                  import_fields: Mapping[str, str]) -> S:
    """Fill ``sections`` (a fresh sections object) from the marked blocks, VERINA's way.

    Raises :class:`SectionError` on an unknown or repeated section name, or an empty
    ``code`` section (VERINA refuses such tasks). ``import type=X`` blocks go to
    ``import_fields[X]`` (concatenated); other import types are ignored.
    """
    known = set(body_sections)
    imports: dict[str, str] = {}
    seen: set[str] = set()
    for sec in marked:
        if sec.name == "import":
            target = import_fields.get(sec.arg("type") or "")
            if target is not None:
                imports[target] = imports.get(target, "") + sec.body
            continue
        if sec.name not in known:
            raise SectionError(sec.line, f"unknown section {sec.name!r}")
        if sec.name in seen:
            raise SectionError(sec.line, f"section {sec.name!r} appears twice")
        seen.add(sec.name)
        if sec.body.strip():
            setattr(sections, sec.name, sec.body)
    for target, body in imports.items():
        if body.strip():
            setattr(sections, target, body)
    if not sections.code.strip():  # type: ignore[attr-defined]
        raise SectionError(1, "the code section is missing or empty")
    return sections
