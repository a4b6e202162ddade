"""The toy language's plug-in: its task folder, its values and its offline red team."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toy_language.expr import ExprError, parse
from veriscale.atomic import write_files_atomic
from veriscale.backends.language import Template, Weakening
from veriscale.benchmark import rows
from veriscale.benchmark.model import LoadIssue, Signature, Task
from veriscale.benchmark.verina import folder
from veriscale.benchmark.verina.folder import DESCRIPTION, REJECT_JSON, TASK_JSON, TEST_JSON
from veriscale.values import ValueType, parse_type

LANGUAGE = "expr"
TASK_FILE = "task.expr"
LAYOUT = folder.Layout(TASK_FILE)
SECTIONS = ("precond", "code", "postcond")


@dataclass(frozen=True)
class ExprSections:
    precond: str = "True"
    code: str = "0"
    postcond: str = "True"

    def identity(self) -> Any:
        return dataclasses.asdict(self)


def read_sections(text: str) -> ExprSections:
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("@"):
            current = line[1:].strip()
            if current not in SECTIONS:
                raise ExprError(f"unknown section @{current}")
            found[current] = []
        elif current is not None:
            found[current].append(line)
    return ExprSections(**{k: "\n".join(v).strip() for k, v in found.items()})


def render_sections(s: ExprSections) -> str:
    return "".join(f"@{name}\n{getattr(s, name)}\n" for name in SECTIONS)


def load_task_dir(path: Path) -> tuple[Task | None, list[LoadIssue]]:
    raw = folder.read_raw(path, LAYOUT)
    issues = list(raw.issues)

    def issue(file: str, where: str, kind: str, message: str) -> None:
        issues.append(LoadIssue(raw.name, file, where, kind, message))

    meta = raw.data.get(TASK_JSON)
    if not isinstance(meta, dict) or TASK_FILE not in raw.texts:
        return None, issues
    try:
        signature = Signature.from_json(meta["signature"])
        sections = read_sections(raw.texts[TASK_FILE])
    except (KeyError, ValueError) as exc:
        issue(TASK_FILE, "", "bad_section", str(exc))
        return None, issues
    unreadable: dict[str, str] = {}
    tests = rows.read_rows(rows.decode_tests, signature, raw.data, TEST_JSON, issue,
                           unreadable, raw.issues)
    rejects = rows.read_rows(rows.decode_rejects, signature, raw.data, REJECT_JSON, issue,
                             unreadable, raw.issues)
    return Task(id=raw.name, description=raw.texts.get(DESCRIPTION, ""), signature=signature,
                tests=tests, reject_inputs=rejects, sections={LANGUAGE: sections}, meta=meta,
                path=Path(path), unreadable=unreadable), issues


def write_task_dir(task: Task, path: Path) -> Path:
    return write_files_atomic(path, {
        TASK_JSON: folder.dump({"id": task.id, "signature": task.signature.to_json()},
                               ensure_ascii=True),
        DESCRIPTION: task.description,
        TASK_FILE: render_sections(task.section(LANGUAGE)),
        TEST_JSON: folder.dump(rows.encode_tests(task.id, task.signature, task.tests),
                               ensure_ascii=False),
        REJECT_JSON: folder.dump(rows.encode_rejects(task.id, task.signature,
                                                     task.reject_inputs), ensure_ascii=False),
    })


def screen(code: str) -> str | None:
    try:
        parse(code)
    except ExprError as exc:
        return str(exc)
    return None


class ExprPlugin:
    name = LANGUAGE
    display_name = "Toy expressions"
    backend = "expr"
    backend_path = "toy_language.backend:ExprBackend"
    format_name = "toy-expr"
    task_files = (TASK_FILE,)
    screen_name = "toy_language.plugin.screen"
    backend_takes_seed = False
    backend_takes_runner = False
    cheap_evaluation = False
    answer_syntax = None

    def owns_task_dir(self, path: Path) -> bool:
        return (Path(path) / TASK_FILE).exists()

    def load_task_dir(self, path: Path) -> tuple[Task | None, list[Any]]:
        return load_task_dir(path)

    def write_task_dir(self, task: Task, path: Path) -> Path:
        return write_task_dir(task, path)

    load_warnings: tuple[str, ...] = ()

    def raw_suite(self, path: Path) -> tuple[Any, Any]:
        raw = folder.read_raw(path, LAYOUT)
        return raw.data.get(TEST_JSON), raw.data.get(REJECT_JSON)

    def lint_rows(self, path: Path, task: Task) -> folder.SuiteRows:
        return folder.SuiteRows(*self.raw_suite(path), render_hazards=False)

    def parse_type(self, text: str) -> ValueType:
        return parse_type(text)

    def type_text(self, t: ValueType) -> str:
        return t.notation()

    def render_value(self, t: ValueType, value: Any) -> str:
        return str(value)

    def parse_value(self, t: ValueType, text: str) -> Any:
        return int(text)

    def input_ok(self, task: Task, inp: Any) -> bool:
        return True

    def screen(self, code: str) -> str | None:
        return screen(code)

    def screen_body(self, body: str) -> str | None:
        return screen(body)

    def adversary_templates(self, task: Task) -> list[Template]:
        """Constants, an echo of the first parameter, and near misses of the reference."""
        code = task.section(LANGUAGE).code
        first = task.signature.params[0].name
        return [Template("constant-return", "0", "0"), Template("constant-return", "1", "1"),
                Template("input-echo", first, first),
                Template("near-miss", "+1", f"({code}) + 1"),
                Template("near-miss", "-1", f"({code}) - 1")]

    def weakened_postconditions(self, task: Task) -> list[Weakening]:
        return [Weakening("drop:all", "True")]

    def split_conjuncts(self, body: str) -> list[str]:
        return [part.strip() for part in body.split(" and ")]

    def code_mutants(self, task: Task, limit: int = 10, seed: int = 0) -> list[tuple[str, str]]:
        return []

    def spec_mutants(self, task: Task, kind: str = "postcond", limit: int = 10,
                     seed: int = 0) -> list[tuple[str, str]]:
        return []

    def trivial_precondition(self, task: Task) -> bool:
        return task.section(LANGUAGE).precond.strip() == "True"

    def ground_truth(self, task: Task) -> tuple[str, tuple[str, str, str, str]]:
        s = task.section(LANGUAGE)
        return s.code, (s.precond, s.postcond, "", "")

    def code_definition(self, task: Task, body: str, code_aux: str = "") -> str:
        return body

    def solution_imports(self, imports: str) -> str:
        return ""


PLUGIN = ExprPlugin()
