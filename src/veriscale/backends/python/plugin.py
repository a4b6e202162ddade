"""The Python language plug-in (see :mod:`veriscale.backends.language`): Python-spec
tasks (``task.py`` with ``precondition`` / ``reference`` / ``postcondition``). The
LLM-side parts (prompt parts, answer parsers) come from its ``prompting`` and ``answers``."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from veriscale.backends.language import ModuleLLMParts
from veriscale.backends.python.sections import python_sections
from veriscale.benchmark.model import Task
from veriscale.benchmark.verina.folder import SuiteRows
from veriscale.values import ValueType, from_native, parse_type, to_native


class PythonPlugin(ModuleLLMParts):
    name = "python"
    display_name = "Python"
    backend = "python"
    backend_path = "veriscale.backends.python.backend:PythonBackend"  # its class, imported only when a backend is made
    package = "veriscale.backends.python"  # its prompting and answers modules
    fence = "python"  # the code fence tag of prompts
    format_name = "python"
    task_files = ("task.py",)
    backend_takes_seed = True  # its backend seeds the candidates' ``random`` from the run's seed
    backend_takes_runner = False  # its backend takes ``--runner`` (which prover binary)
    cheap_evaluation = True  # ``time_evaluation = "auto"`` times it (no prover start-up cost)

    # ------------------------------------------------------------ task format

    def owns_task_dir(self, path: Path) -> bool:
        return (Path(path) / "task.py").exists()

    def load_task_dir(self, path: Path) -> tuple[Task | None, list[Any]]:
        from veriscale.backends.python import format as F

        return F.load_task_dir(path)

    def write_task_dir(self, task: Task, path: Path) -> Path:
        from veriscale.backends.python import format as F

        return F.write_task_dir(task, path)

    load_warnings: tuple[str, ...] = ()

    def lint_rows(self, path: Path, task: Task) -> SuiteRows:
        return SuiteRows(*self.raw_suite(path))

    def raw_suite(self, path: Path) -> tuple[Any, Any]:
        from veriscale.benchmark.verina.folder import REJECT_JSON, TEST_JSON

        raw = _read_raw(path)
        return raw.data.get(TEST_JSON), raw.data.get(REJECT_JSON)

    # ------------------------------------------------------------ types and values

    def parse_type(self, text: str) -> ValueType:
        return parse_type(text)

    def type_text(self, t: ValueType) -> str:
        return t.notation()

    def render_value(self, t: ValueType, value: Any) -> str:
        """A Python literal of the value as user code sees it."""
        return repr(to_native(t, value))

    def parse_value(self, t: ValueType, text: str) -> Any:
        return from_native(t, ast.literal_eval(text))

    def input_ok(self, task: Task, inp: Any) -> bool:
        return True

    # ------------------------------------------------------------ untrusted code

    def screen(self, code: str) -> str | None:
        from veriscale.backends.python.safety import check_untrusted_python

        return check_untrusted_python(code) or None

    def screen_body(self, body: str) -> str | None:
        return self.screen(body)

    screen_name = "veriscale.backends.python.safety.check_untrusted_python"

    # ------------------------------------------------------------ red team, weakenings, mutants

    def adversary_templates(self, task: Task) -> list[Any]:
        from veriscale.backends.python.templates import python_templates

        return python_templates(task)

    def weakened_postconditions(self, task: Task) -> list[Any]:
        from veriscale.backends.python.weaken import python_weakenings

        py = python_sections(task)
        if py is None:
            return []
        return python_weakenings(py.postcondition, task.signature.return_type)

    def split_conjuncts(self, body: str) -> list[str]:
        from veriscale.backends.python.conjuncts import split_conjuncts

        return split_conjuncts(body)

    def code_mutants(self, task: Task, limit: int = 10, seed: int = 0) -> list[tuple[str, str]]:
        from veriscale.backends.python.mutants import python_code_mutants

        return python_code_mutants(task, limit, seed)

    def spec_mutants(self, task: Task, kind: str = "postcond", limit: int = 10,
                     seed: int = 0) -> list[tuple[str, str]]:
        from veriscale.backends.python.mutants import python_spec_mutants

        return python_spec_mutants(task, kind, limit, seed)

    def trivial_precondition(self, task: Task) -> bool:
        py = python_sections(task)
        if py is None:
            return False
        pre = py.precondition
        return "return True" in pre and pre.count("return") == 1

    def ground_truth(self, task: Task) -> tuple[str, tuple[str, str, str, str]]:
        """The backend puts the task's aux section before candidate code and specs,
        so the ground truth carries its own sections only."""
        py = python_sections(task)
        if py is None:
            raise ValueError(f"{task.id}: task has no Python sections")
        return py.reference, (py.precondition, py.postcondition, "", "")

    # ------------------------------------------------------------ LLM prompts and answers

    def code_definition(self, task: Task, body: str, code_aux: str = "") -> str:
        """A candidate's code as the module the backend runs (aux first)."""
        return (code_aux.rstrip() + "\n\n" + body) if code_aux.strip() else body

    def solution_imports(self, imports: str) -> str:
        return ""  # Python candidates import nothing through the solutions file


PYTHON = PythonPlugin()

__all__ = ["PYTHON", "PythonPlugin"]


def _read_raw(path: Path) -> Any:
    """The files of a Python task folder, read as the linter reads any task folder
    (the default layout: ``task.py`` beside VERINA's JSON files)."""
    from veriscale.benchmark.verina.folder import Layout, read_raw

    return read_raw(path, Layout("task.py"))
