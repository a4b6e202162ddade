"""VERINA's task folder layout: which files a task folder holds, read and written once.

Every track of VERINA stores a task the same way: ``task.json``, ``description.txt``,
the task file of its language (``task.lean``, ``task.v``), a tests file and a rejected
inputs file (``test.json`` / ``reject_inputs.json``; the Coq track names them
``coq_test.json`` / ``coq_reject_inputs.json``), and for some Lean tasks a duplicate
``signature.json``. A :class:`Layout` names a track's files; :func:`read_raw` reads
them without decoding a value (so the linter sees exactly what is on disk) and
:func:`dump` writes a JSON file's text the way VERINA does. What the files *mean* (sections, rows)
is the track's loader's business.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veriscale.benchmark import rows
from veriscale.benchmark.model import LoadIssue

TASK_JSON = "task.json"
DESCRIPTION = "description.txt"
SIGNATURE_JSON = "signature.json"
TEST_JSON = rows.TEST_JSON
REJECT_JSON = rows.REJECT_JSON


@dataclass(frozen=True)
class Layout:
    """The file names of one track's task folders (``optional`` files may be absent)."""

    task_file: str
    tests: str = TEST_JSON
    rejects: str = REJECT_JSON
    optional: tuple[str, ...] = ()

    @property
    def required(self) -> tuple[str, ...]:
        return (TASK_JSON, self.task_file, self.tests, DESCRIPTION, self.rejects)

    @property
    def json_files(self) -> tuple[str, ...]:
        return (TASK_JSON, self.tests, self.rejects,
                *(f for f in self.optional if f.endswith(".json")))


@dataclass(frozen=True)
class SuiteRows:
    """A task folder's test rows and reject rows as ``validate`` judges them.

    The rows have VERINA's JSON shape (``input`` / ``expected`` / ``unexpected``, values
    in its notation); ``tests_file`` and ``rejects_file`` are the names a defect is
    located by; ``render_hazards`` says whether VERINA's renderer pastes these values
    into source text (so a value it would break is a defect). A track whose files hold
    another encoding gives its decoded suite re-encoded (the Coq track).
    """

    tests: Any
    rejects: Any
    tests_file: str = TEST_JSON
    rejects_file: str = REJECT_JSON
    render_hazards: bool = True


@dataclass
class RawTask:
    """What a task folder holds, before any value is decoded.

    ``texts`` maps file name → text for the files that exist and could be read;
    ``data`` maps JSON file name → parsed JSON. File-level problems are in
    ``issues`` already.
    """

    name: str
    path: Path | None
    texts: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    issues: list[LoadIssue] = field(default_factory=list)


def read_raw(path: Path, layout: Layout) -> RawTask:
    """Read every file of a task folder; never raises for a bad or missing file."""
    path = Path(path)
    raw = RawTask(path.name, path)
    for name in (*layout.required, *layout.optional):
        file = path / name
        if not file.is_file():
            if name not in layout.optional:
                raw.issues.append(
                    LoadIssue(raw.name, name, "", "missing_file", f"{file} does not exist"))
            continue
        try:
            with open(file, encoding="utf-8", newline="") as fh:
                raw.texts[name] = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raw.issues.append(LoadIssue(raw.name, name, "", "bad_file", str(exc)))
    return parse_raw_json(raw, layout.json_files)


def parse_raw_json(raw: RawTask, names: tuple[str, ...]) -> RawTask:
    """Parse the JSON texts ``names`` of ``raw`` into ``raw.data`` (bad JSON → issue)."""
    for name in names:
        if name in raw.texts and name not in raw.data:
            try:
                raw.data[name] = json.loads(raw.texts[name])
            except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
                raw.issues.append(LoadIssue(raw.name, name, "", "bad_json", rows.json_error(exc)))
    return raw


def dump(data: Any, *, ensure_ascii: bool) -> str:
    """A JSON file's text as VERINA writes it (four-space indent)."""
    return json.dumps(data, indent=4, ensure_ascii=ensure_ascii)
