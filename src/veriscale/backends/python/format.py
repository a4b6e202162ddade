"""Python-spec task folders (format ``veriscale-python/1``, docs/python-task-format.md).

A task folder holds ``task.json``, ``description.txt``, ``task.py`` (four marked
sections: aux, precondition, reference, postcondition), ``test.json`` and
``reject_inputs.json`` in the VERINA value encoding. Loading never executes
``task.py``: it is split and syntax-checked only; running it is the sandbox's job.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from veriscale.atomic import write_files_atomic
from veriscale.backends.python.sections import (
    LANGUAGE,
    SECTIONS,
    PythonSections,
    python_sections,
    render_sections,
)
from veriscale.benchmark import rows
from veriscale.benchmark.model import LoadIssue, Signature, Task

FORMAT = "veriscale-python/1"
REQUIRED_FUNCTIONS = {"precondition": "precondition", "reference": "reference",
                      "postcondition": "postcondition"}
MARKER = re.compile(r"^#\s*veriscale:\s*(\S+)\s*$")

DEFAULT_FILES = {
    "description_file": "./description.txt",
    "code_file": "./task.py",
    "test_file": "./test.json",
    "reject_inputs_file": "./reject_inputs.json",
}


class SectionError(ValueError):
    """``task.py`` does not have the four marked sections in order."""


# ---------------------------------------------------------------------------
# task.py sections


def split_sections(source: str) -> PythonSections:
    """Split ``task.py`` at its ``# veriscale: <section>`` markers.

    Text before the first marker (a module docstring, imports) belongs to aux,
    so every section sees it. Raises :class:`SectionError` on an unknown,
    repeated, out-of-order or missing section (aux may be omitted).
    """
    bodies: dict[str, list[str]] = {}
    current = "aux"
    prelude: list[str] = []
    seen: list[str] = []
    for lineno, line in enumerate(source.splitlines(), 1):
        m = MARKER.match(line.strip())
        if m:
            name = m.group(1)
            if name not in SECTIONS:
                raise SectionError(f"line {lineno}: unknown section {name!r}")
            if name in seen:
                raise SectionError(f"line {lineno}: section {name!r} appears twice")
            if seen and SECTIONS.index(name) < SECTIONS.index(seen[-1]):
                raise SectionError(
                    f"line {lineno}: section {name!r} comes after {seen[-1]!r}; "
                    f"the order is {', '.join(SECTIONS)}")
            seen.append(name)
            current = name
            bodies[name] = []
            continue
        (bodies[current] if seen else prelude).append(line)
    missing = [s for s in SECTIONS[1:] if s not in seen]
    if missing:
        raise SectionError(f"missing section(s) {', '.join(missing)}")
    aux_lines = prelude + bodies.get("aux", [])
    return PythonSections(
        aux=_body(aux_lines),
        precondition=_body(bodies["precondition"]),
        reference=_body(bodies["reference"]),
        postcondition=_body(bodies["postcondition"]),
        source=source,
    )


def _body(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n")


def module_source(sections: PythonSections) -> str:
    """The executable module of a task: the file as read, or the rendered sections."""
    if sections.source and _same_sections(sections):
        return sections.source
    return render_sections(sections)


def _same_sections(sections: PythonSections) -> bool:
    try:
        again = split_sections(sections.source)
    except SectionError:
        return False
    return all(getattr(again, n) == getattr(sections, n) for n in SECTIONS)


def section_problems(sections: PythonSections) -> list[tuple[str, str]]:
    """(section, message) for syntax errors and missing functions, without executing."""
    problems: list[tuple[str, str]] = []
    try:
        tree = ast.parse(module_source(sections))
    except SyntaxError as exc:
        return [("task.py", f"syntax error: {exc.msg} (line {exc.lineno})")]
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for section, fn in REQUIRED_FUNCTIONS.items():
        if fn not in defined:
            problems.append((section, f"section does not define function {fn!r}"))
    return problems


# ---------------------------------------------------------------------------
# loading


def load_task_dir(path: Path) -> tuple[Task | None, list[LoadIssue]]:
    """One Python-spec task and the problems found; ``None`` when it is unusable.

    Bad test or reject items are reported and skipped; the rest still load.
    """
    path = Path(path)
    issues: list[LoadIssue] = []
    name = path.name

    def issue(file: str, fld: str, kind: str, message: str) -> None:
        issues.append(LoadIssue(name, file, fld, kind, message))

    meta = _read_json(path / "task.json", "task.json", issue)
    if meta is None:
        return None, issues
    if not isinstance(meta, dict):
        issue("task.json", "", "bad_json", "task.json must hold an object")
        return None, issues
    fmt = meta.get("format")
    if fmt != FORMAT:
        issue("task.json", "format", "bad_format",
              f"format is {fmt!r}; this loader reads {FORMAT!r}")
        return None, issues
    task_id = meta.get("id", name)
    if not isinstance(task_id, str) or not task_id:
        issue("task.json", "id", "bad_json", f"id must be a non-empty string, got {task_id!r}")
        return None, issues
    name = task_id
    try:
        signature = Signature.from_json(meta["signature"])
    except (KeyError, TypeError, ValueError) as exc:
        issue("task.json", "signature", "unparsable", f"{type(exc).__name__}: {exc}")
        return None, issues

    files = {k: meta.get(k, v) for k, v in DEFAULT_FILES.items()}
    desc_path = path / str(files["description_file"])
    description = ""
    try:
        description = desc_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        issue(desc_path.name, "description_file", _file_kind(exc), str(exc))

    code_path = path / str(files["code_file"])
    try:
        source = code_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        issue(code_path.name, "code_file", _file_kind(exc), str(exc))
        return None, issues
    try:
        sections = split_sections(source)
    except SectionError as exc:
        issue(code_path.name, "sections", "bad_section", str(exc))
        return None, issues
    problems = section_problems(sections)
    for section, message in problems:
        issue(code_path.name, section, "bad_section", message)
    if problems:
        return None, issues

    unreadable: dict[str, str] = {}
    tests = _rows(rows.decode_tests, signature, path / str(files["test_file"]), issue, unreadable)
    rejects = _rows(rows.decode_rejects, signature, path / str(files["reject_inputs_file"]),
                    issue, unreadable)

    task = Task(
        id=task_id, description=description, signature=signature, tests=tests,
        reject_inputs=rejects, sections={LANGUAGE: sections}, meta=meta, path=path,
        unreadable=unreadable,
    )
    return task, issues


def _file_kind(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return "missing_file"
    return "bad_file"


def _read_json(p: Path, label: str, issue: Any) -> Any:
    """Parsed JSON of ``p``, or ``None`` after reporting why it cannot be read."""
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        issue(label, "", _file_kind(exc), str(exc))
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        issue(label, "", "bad_json", rows.json_error(exc))
        return None


def _rows(decoder: Any, signature: Signature, p: Path, issue: Any,
          unreadable: dict[str, str]) -> list[Any]:
    """Decode one rows file; a missing, unreadable or non-list file goes into
    ``unreadable`` (never read as zero rows)."""
    problems: list[str] = []

    def note(label: str, fld: str, kind: str, message: str) -> None:
        problems.append(message)
        issue(label, fld, kind, message)

    data = _read_json(p, p.name, note)
    if data is None:
        unreadable[p.name] = problems[-1] if problems else f"{p.name} could not be read"
        return []
    try:
        return decoder(signature, data, issue, p.name)
    except rows.RowsUnreadable as exc:
        issue(p.name, "", "bad_json", str(exc))
        unreadable[p.name] = str(exc)
        return []


# ---------------------------------------------------------------------------
# writing


def write_task_dir(task: Task, path: Path) -> Path:
    """Write ``task`` as a Python-spec task folder at ``path`` (atomic per file)."""
    py = python_sections(task)
    if py is None:
        raise ValueError(f"task {task.id} has no Python sections to write")
    meta = {
        "format": FORMAT,
        "id": task.id,
        "signature": task.signature.to_json(),
        **DEFAULT_FILES,
        "metadata": dict(task.meta.get("metadata", {})) if isinstance(task.meta, dict) else {},
    }
    tests = rows.encode_tests(task.id, task.signature, task.tests)
    rejects = rows.encode_rejects(task.id, task.signature, task.reject_inputs)
    return write_files_atomic(path, {
        "task.json": _dumps(meta), "description.txt": task.description,
        "task.py": module_source(py), "test.json": _dumps(tests),
        "reject_inputs.json": _dumps(rejects)})


def new_task_dir(
    root: Path,
    task_id: str,
    name: str,
    params: list[tuple[str, str]],
    return_type: str,
    task_py: str,
    *,
    description: str = "",
    tests: list[dict[str, Any]] | None = None,
    rejects: list[dict[str, Any]] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Author a Python-spec task folder from raw parts (VERINA-encoded tests).

    The way to build a benchmark programmatically; nothing is checked here,
    :func:`load_task_dir` reports whatever is wrong, by task, file and field.
    """
    meta = {
        "format": FORMAT,
        "id": task_id,
        "signature": {
            "name": name,
            "parameters": [{"param_name": p, "param_type": t} for p, t in params],
            "return_type": return_type,
        },
        **DEFAULT_FILES,
        "metadata": metadata or {},
    }
    return write_files_atomic(Path(root) / task_id, {
        "task.json": _dumps(meta),
        "description.txt": description or f"-----Description-----\n{name}\n",
        "task.py": task_py, "test.json": _dumps(tests or []),
        "reject_inputs.json": _dumps(rejects or [])})


def _dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
