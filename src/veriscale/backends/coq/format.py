"""VERINA's Coq task format: read a task folder into a :class:`Task`, write one back.

A folder holds ``task.json`` (its ``coq_signature`` is the signature we use),
``description.txt``, ``task.v``, ``coq_test.json`` and
``coq_reject_inputs.json``, values being Coq literal text. ``task.v`` is cut
at line-based markers ``(* !benchmark @start <name> [k=v] *)`` / ``(* !benchmark
@end <name> *)``; the end marker of a definition body is followed by the
``.`` that closes the definition. Writing gives the file back byte for byte
when the sections are unchanged and renders VERINA's layout otherwise.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from veriscale.atomic import write_files_atomic
from veriscale.backends.coq.literal import parse_coq, to_coq
from veriscale.backends.coq.sections import LANGUAGE, CoqSections, coq_sections
from veriscale.backends.coq.types import parse_coq_type
from veriscale.benchmark import rows
from veriscale.benchmark.model import (
    LoadIssue,
    Param,
    Signature,
    Task,
)
from veriscale.benchmark.verina import folder
from veriscale.benchmark.verina.codec import decode
from veriscale.benchmark.verina.folder import DESCRIPTION, TASK_JSON, Layout
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

TASK_V = "task.v"
TEST_JSON = "coq_test.json"
REJECT_JSON = "coq_reject_inputs.json"
LAYOUT = Layout(TASK_V, tests=TEST_JSON, rejects=REJECT_JSON)
"""The Coq track's task folder: its own task file and rows files."""

RAW_JSON_VALUE = "raw_json_value"
SIGNATURE_FROM_TASK_V = "signature_from_task_v"
LOAD_WARNINGS = (RAW_JSON_VALUE, SIGNATURE_FROM_TASK_V)
"""Both are warnings: the value or the signature was still read."""


_MARKER = re.compile(r"\(\*\s*!benchmark\s+(@\w+)\s*(.*?)\s*\*\)")


def is_coq_task_dir(path: Path) -> bool:
    return (Path(path) / TASK_V).is_file()


def _find_marker(line: str) -> Marker | None:
    m = _MARKER.search(line)
    return None if m is None else (m.group(1), m.group(2).split(), m.group(1))


def split_sections(text: str) -> list[MarkedSection]:
    """The marked blocks of a ``task.v``; :class:`SectionError` for bad markers."""
    return sections_of(text, _find_marker)


def parse_coq_sections(text: str) -> CoqSections:
    """The sections of a ``task.v`` (``source`` = ``text``)."""
    return read_sections(CoqSections(source=text), split_sections(text), BODY_SECTIONS,
                         IMPORT_FIELDS)


def _norm(body: str) -> str:
    return "\n".join(line.rstrip() for line in body.strip("\n").splitlines()).strip()


def sections_equal(a: CoqSections, b: CoqSections) -> bool:
    """Same bodies up to surrounding blank lines and indentation of the first line."""
    defaults = CoqSections()
    for name in SECTION_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        x = x if x.strip() else getattr(defaults, name)
        y = y if y.strip() else getattr(defaults, name)
        if _dedent(x) != _dedent(y):
            return False
    return True


def _dedent(body: str) -> str:
    lines = [ln.rstrip() for ln in body.strip("\n").splitlines()]
    first = next((ln for ln in lines if ln.strip()), "")
    if first.startswith("  "):
        lines = [ln[2:] if ln.startswith("  ") else ln for ln in lines]
    return "\n".join(lines).strip()


# ---------------------------------------------------------------- headers


def definition_header(sections: CoqSections, which: str) -> str | None:
    """The ``Definition ... :=`` text that opens section ``which`` in the source."""
    source = sections.source
    m = re.search(r"\(\*\s*!benchmark\s+@start\s+" + which + r"\s*\*\)", source)
    if m is None:
        return None
    before = source[: m.start()]
    d = before.rfind("Definition ")
    f = before.rfind("Fixpoint ")
    start = max(d, f)
    return before[start:].strip() if start >= 0 else None


def returns_bool(sections: CoqSections, which: str) -> bool:
    """Is the ``which`` definition (precond/postcond) ``bool``-valued?"""
    header = definition_header(sections, which)
    return header is None or bool(re.search(r":\s*bool\s*:=\s*$", header))


def takes_proof_argument(sections: CoqSections) -> bool:
    header = definition_header(sections, "code") or ""
    return "h_precond" in header


# ---------------------------------------------------------------- rendering


def _binders(sig: Signature) -> str:
    return " ".join(f"({p.name} : {p.type_text})" for p in sig.params)


def _body(text: str) -> str:
    lines = text.strip("\n").splitlines() or [""]
    if lines[0].startswith("  "):
        return "\n".join(lines) + "\n"
    return "".join(("  " + ln if ln.strip() else ln) + "\n" for ln in lines)


def _block(name: str, body: str, header: str = "") -> str:
    inner = body.strip("\n")
    return f"(* !benchmark @start {name}{header} *)\n{inner}\n(* !benchmark @end {name} *)\n"


def render_task_v(sig: Signature, s: CoqSections) -> str:
    """A ``task.v`` in VERINA's Coq layout (bool specs, code without a proof argument)."""
    name, binders = sig.name, _binders(sig)
    args = " ".join(p.name for p in sig.params)
    ret = sig.return_text
    sp = f" {binders}" if binders else ""
    sa = f" {args}" if args else ""
    parts = [
        _block("import", s.task_imports, " type=task"), "\n",
        _block("import", s.solution_imports, " type=solution"), "\n",
        _block("task_aux", s.task_aux), "\n",
        _block("solution_aux", s.solution_aux), "\n",
        _block("precond_aux", s.precond_aux), "\n",
        f"Definition {name}_precond{sp} : bool :=\n  (* !benchmark @start precond *)\n"
        f"{_body(s.precond)}  (* !benchmark @end precond *).\n", "\n",
        _block("code_aux", s.code_aux), "\n",
        f"Definition {name}{sp} : {ret} :=\n  (* !benchmark @start code *)\n"
        f"{_body(s.code)}  (* !benchmark @end code *).\n", "\n",
        _block("postcond_aux", s.postcond_aux), "\n",
        f"Definition {name}_postcond{sp} (result : {ret}) : bool :=\n"
        f"  (* !benchmark @start postcond *)\n{_body(s.postcond)}  (* !benchmark @end postcond *).\n",
        "\n",
        _block("proof_aux", s.proof_aux), "\n",
        f"Theorem {name}_postcond_satisfied{sp} :\n    {name}_precond{sa} = true ->\n"
        f"    {name}_postcond{sa} ({name}{sa}) = true.\nProof.\n"
        f"  (* !benchmark @start proof *)\n{_body(s.proof)}  (* !benchmark @end proof *)\n"
        + ("Admitted.\n" if "admit" in s.proof.lower() else "Qed.\n"),
    ]
    return "".join(parts)


def coq_text(task: Task) -> str:
    """The ``task.v`` to write: the source as read when unchanged, else the layout."""
    coq = coq_sections(task)
    if coq is None:
        raise ValueError(f"{task.id}: task has no Coq sections to write as task.v")
    if coq.source:
        try:
            if sections_equal(parse_coq_sections(coq.source), coq):
                return coq.source
        except SectionError:
            pass
    return render_task_v(task.signature, coq)


# ---------------------------------------------------------------- reading


def signature_from_task_v(text: str) -> dict[str, Any] | None:
    """``coq_signature`` recovered from the code definition of ``task.v``."""
    try:
        sections = parse_coq_sections(text)
    except SectionError:
        return None
    header = definition_header(sections, "code")
    if header is None:
        return None
    m = re.match(r"(?:Definition|Fixpoint)\s+([\w']+)\s*(.*?)\s*:\s*([^:]*?)\s*:=\s*$", header, re.S)
    if m is None:
        return None
    params = []
    for pm in re.finditer(r"\(\s*([\w']+)\s*:\s*((?:[^()]|\([^()]*(?:\([^()]*\))*[^()]*\))*)\)",
                          m.group(2)):
        if pm.group(1) == "h_precond":
            continue
        params.append({"param_name": pm.group(1), "param_type": pm.group(2).strip()})
    return {"name": m.group(1), "parameters": params, "return_type": m.group(3).strip()}


def coq_signature(data: dict[str, Any]) -> Signature:
    params = tuple(Param(p["param_name"], parse_coq_type(p["param_type"]), p["param_type"])
                   for p in data["parameters"])
    return Signature(data["name"], params, parse_coq_type(data["return_type"]),
                     data["return_type"])


def decode_value(t: Any, raw: Any) -> tuple[Any, bool]:
    """A value from Coq literal text, or (with ``True``: a warning) from raw JSON."""
    if isinstance(raw, str):
        return parse_coq(t, raw), False
    return decode(t, raw), True


def load_task_dir(path: Path) -> tuple[Task | None, list[LoadIssue]]:
    """Load one Coq task folder; a bad value drops only its row (issue recorded)."""
    path = Path(path)
    name = path.name
    issues: list[LoadIssue] = []

    def issue(file: str, where: str, kind: str, message: str) -> None:
        issues.append(LoadIssue(name, file, where, kind, message))

    raw = folder.read_raw(path, LAYOUT)
    issues += raw.issues
    texts, data = raw.texts, raw.data
    meta = data.get(TASK_JSON)
    if not isinstance(meta, dict) or TASK_V not in texts:
        if TASK_JSON in data and not isinstance(meta, dict):
            issue(TASK_JSON, "", "bad_json", "task.json must hold a JSON object")
        return None, issues
    try:
        sections = parse_coq_sections(texts[TASK_V])
    except SectionError as exc:
        issue(TASK_V, f"line {exc.line}", "bad_section", str(exc))
        return None, issues
    sig_data = meta.get("coq_signature")
    if not isinstance(sig_data, dict):
        sig_data = signature_from_task_v(texts[TASK_V])
        if sig_data is None:
            issue(TASK_JSON, "coq_signature", "bad_json",
                  "no coq_signature, and none could be read from task.v")
            return None, issues
        issue(TASK_JSON, "coq_signature", SIGNATURE_FROM_TASK_V,
              f"no coq_signature; read {sig_data['name']} from the code definition of task.v")
    try:
        signature = coq_signature(sig_data)
    except TypeParseError as exc:
        issue(TASK_JSON, "coq_signature", "bad_type", str(exc))
        return None, issues
    except (KeyError, TypeError) as exc:
        issue(TASK_JSON, "coq_signature", "bad_json", f"malformed coq_signature: {exc!r}")
        return None, issues

    codec = coq_values(issue)
    unreadable: dict[str, str] = {}
    tests = rows.read_rows(rows.decode_tests, signature, data, TEST_JSON, issue, unreadable,
                           issues, codec)
    rejects = rows.read_rows(rows.decode_rejects, signature, data, REJECT_JSON, issue,
                             unreadable, issues, codec)
    task = Task(
        id=meta.get("id") if isinstance(meta.get("id"), str) else name,
        description=texts.get(DESCRIPTION, ""), signature=signature, tests=tests,
        reject_inputs=rejects, sections={LANGUAGE: sections}, meta=meta, path=path,
        unreadable=unreadable,
    )
    return task, issues


def coq_values(issue: Any) -> rows.ValueCodec:
    """Coq literal text in rows; raw JSON values are still read (by their type), with
    a warning naming the row."""
    def dec(t: Any, raw: Any, file: str, where: str) -> Any:
        v, from_json = decode_value(t, raw)
        if from_json:
            issue(file, where, RAW_JSON_VALUE,
                  f"raw JSON {json.dumps(raw)} instead of Coq literal text; read by its type")
        return v
    return rows.ValueCodec(lambda t, v: to_coq(t, v, arg=False), dec)


_WRITE = rows.ValueCodec(lambda t, v: to_coq(t, v, arg=False), lambda t, raw, f, w: None)


# ---------------------------------------------------------------- writing


def tests_json(task: Task) -> list[dict[str, Any]]:
    """``test.json`` rows in Coq literal text (the shared row codec)."""
    return rows.encode_tests(task.id, task.signature, task.tests, _WRITE)


def rejects_json(task: Task) -> list[dict[str, Any]]:
    return rows.encode_rejects(task.id, task.signature, task.reject_inputs, _WRITE)


def task_json_dict(task: Task) -> dict[str, Any]:
    meta = dict(task.meta) if task.meta else {
        "id": task.id, "description_file": f"./{DESCRIPTION}", "coq_file": f"./{TASK_V}",
        "specification": {"preconditions": "", "postconditions": ""}, "metadata": {},
    }
    meta["id"] = task.id
    if "coq_signature" in meta or not task.meta:
        meta["coq_signature"] = task.signature.to_json()
    return meta


def write_task_dir(task: Task, path: Path) -> Path:
    """Write ``task`` as a Coq task folder (every file replaced atomically)."""
    return write_files_atomic(path, {
        TASK_JSON: folder.dump(task_json_dict(task), ensure_ascii=True),
        DESCRIPTION: task.description, TASK_V: coq_text(task),
        TEST_JSON: folder.dump(tests_json(task), ensure_ascii=False),
        REJECT_JSON: folder.dump(rejects_json(task), ensure_ascii=False)})


def with_sections(task: Task, **bodies: str) -> Task:
    coq = coq_sections(task)
    if coq is None:
        raise ValueError(f"{task.id}: task has no Coq sections")
    return task.with_section(LANGUAGE, replace(coq, **bodies))


# ---------------------------------------------------------------- lint and stats


def raw_suite(path: Path) -> tuple[Any, Any]:
    """The parsed ``coq_test.json`` and ``coq_reject_inputs.json`` (``None`` if unreadable)."""
    out = []
    for fname in (TEST_JSON, REJECT_JSON):
        try:
            out.append(json.loads((Path(path) / fname).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            out.append(None)
    return out[0], out[1]


def lint_rows(task: Task) -> folder.SuiteRows:
    """The rows ``validate`` judges: the decoded suite written back in VERINA's notation
    (the Coq files hold Coq's own encoding), so a duplicate or an expected value listed
    as unexpected reads the same as on the Lean track; defects name the Coq files."""
    sig = task.signature
    tests = [{"input": sig.encode_input(c.input), "expected": sig.encode_output(c.expected),
              "unexpected": [sig.encode_output(u) for u in c.unexpected]} for c in task.tests]
    rejects = [{"input": sig.encode_input(i)} for i in task.reject_inputs]
    return folder.SuiteRows(tests, rejects, TEST_JSON, REJECT_JSON, render_hazards=False)
