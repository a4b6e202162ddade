"""VERINA's Lean track: read a task folder into a :class:`Task`, write one back.

A task folder (:mod:`veriscale.benchmark.verina.folder`) holds ``task.json``,
``description.txt``, ``task.lean``, ``test.json``, ``reject_inputs.json`` and, for
the ``advanced`` tasks, ``signature.json``. Reading is split in two so that the
linter can reuse it: :func:`read_raw` does the I/O (texts and JSON, file-level problems) and
:func:`build_task` is a pure function from that raw content to a task and its
:class:`LoadIssue` records. A bad value drops only that value (or its row);
a task is ``None`` only when it cannot be built at all.

``task.lean`` is parsed the way VERINA does it: line-based markers
``-- !benchmark @start <name> [k=v]`` / ``-- !benchmark @end <name>``, bodies
kept verbatim (every line with its indentation and a trailing newline), blank
sections left at their defaults. Writing reproduces the file byte for byte
when the sections are unchanged and renders the VERINA template otherwise.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from veriscale.atomic import write_files_atomic
from veriscale.backends.lean.sections import LANGUAGE, LeanSections, lean_sections
from veriscale.benchmark import rows
from veriscale.benchmark.model import LoadIssue, Signature, Task
from veriscale.benchmark.verina import folder
from veriscale.benchmark.verina.folder import (
    DESCRIPTION,
    REJECT_JSON,
    SIGNATURE_JSON,
    TASK_JSON,
    TEST_JSON,
    Layout,
    RawTask,
)
from veriscale.benchmark.verina.sections import (
    BODY_SECTIONS,
    IMPORT_FIELDS,
    SECTION_FIELDS,
    MarkedSection,
    Marker,
    SectionError,
    read_sections,
)
from veriscale.benchmark.verina.sections import split_sections as sections_of
from veriscale.values import TypeParseError

TASK_LEAN = "task.lean"
LAYOUT = Layout(TASK_LEAN, optional=(SIGNATURE_JSON,))
"""The Lean track's task folder (the advanced tasks have a ``signature.json`` too)."""

MARKER = "-- !benchmark"



# ---------------------------------------------------------------- task.lean


def _find_marker(line: str) -> Marker | None:
    if MARKER not in line:
        return None
    directive = line.split(MARKER, 1)[1].strip()
    verb, _, rest = directive.partition(" ")
    return verb, rest.split(), directive


def split_sections(text: str) -> list[MarkedSection]:
    """The marked blocks of a Lean file, in order (see :mod:`veriscale.benchmark.verina.sections`)."""
    return sections_of(text, _find_marker)


def parse_lean_sections(text: str) -> LeanSections:
    """VERINA's reading of ``task.lean`` as :class:`LeanSections` (``source`` = ``text``).

    Raises :class:`SectionError` on bad markers, an unknown or repeated section
    name, or an empty ``code`` section (VERINA refuses such tasks).
    """
    return read_sections(LeanSections(source=text), split_sections(text), BODY_SECTIONS,
                         IMPORT_FIELDS)


DEF_SECTIONS = ("precond", "code", "postcond", "proof")
"""Sections whose body sits inside a definition, indented under its header."""


def normalise_sections(sections: LeanSections) -> LeanSections:
    """The bodies as they read back after :func:`render_task_lean`: definition
    bodies indented by two spaces, every non-blank body ending in a newline,
    blank sections at their defaults."""
    defaults = LeanSections()
    out = replace(sections)
    for name in SECTION_FIELDS:
        body = getattr(sections, name)
        if not body.strip():
            body = getattr(defaults, name)
        if name in DEF_SECTIONS:
            body = _indented(body) if body.strip() else body
        elif body.strip():
            body = _with_newline(body)
        setattr(out, name, body)
    return out


def sections_equal(a: LeanSections, b: LeanSections) -> bool:
    """Same section bodies up to :func:`normalise_sections` (``source`` is not compared)."""
    na, nb = normalise_sections(a), normalise_sections(b)
    return all(getattr(na, name) == getattr(nb, name) for name in SECTION_FIELDS)


def _block(name: str, body: str, header: str = "") -> str:
    start = f"-- !benchmark @start {name}{header}\n"
    return start + (_with_newline(body) if body.strip() else "\n") + f"-- !benchmark @end {name}\n"


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _indented(body: str) -> str:
    """A definition body as it sits between its markers: indented by two spaces
    unless it already is (VERINA's rule, judged on the first non-blank line)."""
    lines = body.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    if first.startswith("  "):
        return _with_newline(body)
    return "".join(("  " + ln if ln.strip() else ln) + "\n" for ln in lines)


def _sp(text: str) -> str:
    return f" {text}" if text else ""


def _def_block(name: str, body: str) -> str:
    return (
        f"  -- !benchmark @start {name}\n{_indented(body)}  -- !benchmark @end {name}\n"
    )


def render_task_lean(
    signature: Signature,
    sections: LeanSections,
    *,
    precond_attr: str = "@[reducible, simp]",
    postcond_attr: str = "@[reducible, simp]",
) -> str:
    """A ``task.lean`` in VERINA's layout for ``sections`` (for tasks built from
    scratch or whose sections changed). Parsing the result gives the same
    bodies back, with unindented definition bodies indented by two spaces."""
    from veriscale.backends.lean import render as H

    name = signature.name
    args = H.arg_names(signature)
    parts: list[str] = []
    if sections.task_imports.strip():
        parts.append(_block("import", sections.task_imports, " type=task") + "\n")
    parts.append(_block("import", sections.solution_imports, " type=solution") + "\n")
    if sections.task_aux.strip():
        parts.append(_block("task_aux", sections.task_aux) + "\n")
    parts.append(_block("solution_aux", sections.solution_aux) + "\n")
    parts.append(_block("precond_aux", sections.precond_aux) + "\n")
    parts.append(
        f"{precond_attr}\n{H.precond_header(signature)} :=\n"
        + _def_block("precond", sections.precond)
        + "\n\n"
    )
    parts.append(_block("code_aux", sections.code_aux) + "\n\n")
    parts.append(
        f"{H.code_header(signature)} :=\n" + _def_block("code", sections.code) + "\n\n"
    )
    parts.append(_block("postcond_aux", sections.postcond_aux) + "\n\n")
    parts.append(
        f"{postcond_attr}\n{H.postcond_header(signature, result_colon=': ')} :=\n"
        + _def_block("postcond", sections.postcond)
        + "\n\n"
    )
    parts.append(_block("proof_aux", sections.proof_aux) + "\n\n")
    parts.append(
        f"theorem {name}_spec_satisfied{_sp(H.binders(signature, ': '))} "
        f"(h_precond : {H.precond_call(signature)}) :\n"
        f"    {name}_postcond{_sp(args)} ({name}{_sp(args)} h_precond) h_precond := by\n"
        + _def_block("proof", sections.proof)
    )
    return "".join(parts)


def lean_text(task: Task) -> str:
    """The ``task.lean`` to write: the source as read when its sections are
    unchanged (byte for byte), the VERINA template otherwise."""
    lean = lean_sections(task)
    if lean is None:
        raise ValueError(f"{task.id}: task has no Lean sections to write as task.lean")
    if lean.source:
        try:
            if sections_equal(parse_lean_sections(lean.source), lean):
                return lean.source
        except SectionError:
            pass
    return render_task_lean(task.signature, lean)


# ---------------------------------------------------------------- reading


def _renamed_keys(other: Any, signature: dict[str, Any]) -> bool:
    """Whether ``other`` is ``signature`` with parameters keyed 'name'/'type'."""
    params = other.get("parameters") if isinstance(other, dict) else None
    if isinstance(params, list) and all(isinstance(p, dict) for p in params):
        renamed = [
            {"param_name": p.get("name"), "param_type": p.get("type")} for p in params
        ]
        return bool({**other, "parameters": renamed} == signature)
    return False


def _signature_difference(other: Any, signature: dict[str, Any]) -> str:
    """Say how ``signature.json`` differs from ``task.json``'s signature (it is
    only a duplicate; VERINA reads the one in ``task.json``)."""
    if _renamed_keys(other, signature):
        return ("parameters use keys 'name'/'type' instead of 'param_name'/'param_type' "
                "(task.json's signature is used)")
    return "differs from the signature in task.json (task.json's is used)"


def build_task(raw: RawTask) -> tuple[Task | None, list[LoadIssue]]:
    """Pure: the task that ``raw`` describes, and every problem found on the way."""
    issues = list(raw.issues)
    name = raw.name

    def issue(file: str, where: str, kind: str, message: str) -> None:
        issues.append(LoadIssue(name, file, where, kind, message))

    meta = raw.data.get(TASK_JSON)
    if not isinstance(meta, dict):
        if TASK_JSON in raw.data:
            issue(TASK_JSON, "", "bad_json", "task.json must hold a JSON object")
        return None, issues
    try:
        signature = Signature.from_json(meta["signature"])
    except TypeParseError as exc:
        issue(TASK_JSON, "signature", "bad_type", str(exc))
        return None, issues
    except (KeyError, TypeError) as exc:
        issue(TASK_JSON, "signature", "bad_json", f"malformed signature: {exc!r}")
        return None, issues
    if isinstance(meta.get("id"), str) and meta["id"] != name:
        issue(TASK_JSON, "id", "id_mismatch", f"id {meta['id']!r} differs from the folder name")
    sig_json = raw.data.get(SIGNATURE_JSON)
    if sig_json is not None and sig_json != meta["signature"]:
        issue(SIGNATURE_JSON, "parameters" if _renamed_keys(sig_json, meta["signature"])
              else "", "signature_mismatch", _signature_difference(sig_json, meta["signature"]))

    lean: LeanSections | None = None
    if TASK_LEAN in raw.texts:
        try:
            lean = parse_lean_sections(raw.texts[TASK_LEAN])
        except SectionError as exc:
            issue(TASK_LEAN, f"line {exc.line}", "bad_section", str(exc))
    if lean is None:
        return None, issues

    unreadable: dict[str, str] = {}
    tests = rows.read_rows(rows.decode_tests, signature, raw.data, TEST_JSON, issue, unreadable,
                           raw.issues)
    rejects = rows.read_rows(rows.decode_rejects, signature, raw.data, REJECT_JSON, issue,
                             unreadable, raw.issues)
    task = Task(
        id=meta.get("id") if isinstance(meta.get("id"), str) else name,
        description=raw.texts.get(DESCRIPTION, ""),
        signature=signature,
        tests=tests,
        reject_inputs=rejects,
        sections={LANGUAGE: lean},
        meta=meta,
        path=raw.path,
        unreadable=unreadable,
    )
    return task, issues


def read_raw(path: Path) -> RawTask:
    """The raw content of a Lean task folder (see :func:`folder.read_raw`)."""
    return folder.read_raw(Path(path), LAYOUT)


def load_task_dir(path: Path) -> tuple[Task | None, list[LoadIssue]]:
    """Load one VERINA task folder (see :func:`build_task`)."""
    return build_task(read_raw(Path(path)))


# ---------------------------------------------------------------- writing


def task_json_dict(task: Task) -> dict[str, Any]:
    """``task.json`` content: the original dict (key order kept) with ``id`` and
    ``signature`` brought up to date, or a fresh VERINA-shaped dict."""
    if task.meta:
        meta = dict(task.meta)
        if meta.get("id") != task.id:
            meta["id"] = task.id
        if meta.get("signature") != task.signature.to_json():
            meta["signature"] = task.signature.to_json()
        return meta
    return {
        "id": task.id,
        "signature": task.signature.to_json(),
        "description_file": f"./{DESCRIPTION}",
        "lean_file": f"./{TASK_LEAN}",
        "specification": {"preconditions": "", "postconditions": ""},
        "metadata": {},
        "test_file": f"./{TEST_JSON}",
        "reject_inputs_file": f"./{REJECT_JSON}",
    }


def tests_json(task: Task) -> list[dict[str, Any]]:
    """``test.json`` rows (see :mod:`veriscale.benchmark.rows`)."""
    return rows.encode_tests(task.id, task.signature, task.tests)


def rejects_json(task: Task) -> list[dict[str, Any]]:
    """``reject_inputs.json`` rows (see :mod:`veriscale.benchmark.rows`)."""
    return rows.encode_rejects(task.id, task.signature, task.reject_inputs)


def write_task_dir(task: Task, path: Path, *, signature_json: bool | None = None) -> Path:
    """Write ``task`` as a VERINA task folder at ``path`` (created if needed).

    ``signature.json`` is written when ``signature_json`` is true, or, when it
    is ``None``, when the folder the task was read from had one (VERINA's
    ``advanced`` tasks). Every file is replaced atomically.
    """
    files = {
        TASK_JSON: folder.dump(task_json_dict(task), ensure_ascii=True),
        DESCRIPTION: task.description,
    }
    if signature_json is None:
        signature_json = task.path is not None and (Path(task.path) / SIGNATURE_JSON).is_file()
    if signature_json:
        files[SIGNATURE_JSON] = folder.dump(task.signature.to_json(), ensure_ascii=True)
    files[TASK_LEAN] = lean_text(task)
    files[TEST_JSON] = folder.dump(tests_json(task), ensure_ascii=False)
    files[REJECT_JSON] = folder.dump(rejects_json(task), ensure_ascii=False)
    return write_files_atomic(path, files)


def with_sections(task: Task, **bodies: str) -> Task:
    """A copy of ``task`` whose Lean sections have the given new bodies."""
    lean = lean_sections(task)
    if lean is None:
        raise ValueError(f"{task.id}: task has no Lean sections")
    return task.with_section(LANGUAGE, replace(lean, **bodies))


__all__ = [
    "BODY_SECTIONS",
    "DEF_SECTIONS",
    "LAYOUT",
    "MarkedSection",
    "RawTask",
    "SectionError",
    "build_task",
    "lean_text",
    "load_task_dir",
    "normalise_sections",
    "parse_lean_sections",
    "read_raw",
    "rejects_json",
    "render_task_lean",
    "sections_equal",
    "split_sections",
    "task_json_dict",
    "tests_json",
    "with_sections",
    "write_task_dir",
]
