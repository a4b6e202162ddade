"""The Lean 4 language plug-in (see :mod:`veriscale.backends.language`): what the
stages need to know about Lean, in one place. The LLM-side parts (prompt parts,
answer parsers) are served from its ``prompting`` and ``answers`` modules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from veriscale.backends.language import ModuleLLMParts
from veriscale.backends.lean.sections import lean_sections
from veriscale.benchmark.model import Task
from veriscale.benchmark.verina.folder import SuiteRows
from veriscale.values import ValueType, parse_type


class LeanPlugin(ModuleLLMParts):
    name = "lean"
    display_name = "Lean 4"
    backend = "lean"
    backend_path = "veriscale.backends.lean.backend:LeanBackend"  # its class, imported only when a backend is made
    package = "veriscale.backends.lean"  # its prompting and answers modules
    fence = "lean"  # the code fence tag of prompts
    format_name = "verina"  # the run manifest's name of the task directory format
    task_files = ("task.lean", "task.json")
    backend_takes_seed = False  # its backend seeds the candidates' ``random`` from the run's seed
    backend_takes_runner = True  # its backend takes ``--runner`` (which prover binary)
    cheap_evaluation = False  # ``time_evaluation = "auto"`` times it (no prover start-up cost)

    # ------------------------------------------------------------ task format

    def owns_task_dir(self, path: Path) -> bool:
        """A VERINA Lean task folder (a folder with a ``task.json`` that no plug-in owns
        is also read as one: see :func:`~veriscale.backends.language.plugin_for_dir`)."""
        return (Path(path) / "task.lean").exists()

    def load_task_dir(self, path: Path) -> tuple[Task | None, list[Any]]:
        from veriscale.backends.lean import format as F

        return F.load_task_dir(path)

    def write_task_dir(self, task: Task, path: Path) -> Path:
        from veriscale.backends.lean import format as F

        return F.write_task_dir(task, path)

    load_warnings: tuple[str, ...] = ()

    def lint_rows(self, path: Path, task: Task) -> SuiteRows:
        return SuiteRows(*self.raw_suite(path))

    def raw_suite(self, path: Path) -> tuple[Any, Any]:
        """The parsed test rows and reject rows of a task folder (``None`` if unreadable)."""
        from veriscale.backends.lean.format import REJECT_JSON, TEST_JSON, read_raw

        raw = read_raw(path)
        return raw.data.get(TEST_JSON), raw.data.get(REJECT_JSON)

    # ------------------------------------------------------------ types and values

    def parse_type(self, text: str) -> ValueType:
        return parse_type(text)

    def type_text(self, t: ValueType) -> str:
        return t.notation()

    def render_value(self, t: ValueType, value: Any) -> str:
        from veriscale.benchmark.verina import notation

        return notation.render(t, value)

    def parse_value(self, t: ValueType, text: str) -> Any:
        from veriscale.benchmark.verina import notation

        return notation.parse(t, text)

    def input_ok(self, task: Task, inp: Any) -> bool:
        return True

    # ------------------------------------------------------------ untrusted code

    def screen(self, code: str) -> str | None:
        from veriscale.backends.lean.safety import check_untrusted_lean

        return check_untrusted_lean(code, "commands")

    def screen_body(self, body: str) -> str | None:
        from veriscale.backends.lean.safety import check_untrusted_lean

        return check_untrusted_lean(body, "term")

    screen_name = "veriscale.backends.lean.safety.check_untrusted_lean"

    # ------------------------------------------------------------ red team, weakenings, mutants

    def adversary_templates(self, task: Task) -> list[Any]:
        from veriscale.backends.lean.templates import lean_templates

        return lean_templates(task)

    def weakened_postconditions(self, task: Task) -> list[Any]:
        from veriscale.backends.lean.weaken import lean_weakenings

        lean = lean_sections(task)
        if lean is None or not lean.postcond.strip():
            return []
        return lean_weakenings(lean.postcond, task.signature.return_type)

    def split_conjuncts(self, body: str) -> list[str]:
        from veriscale.backends.lean.conjuncts import split_conjuncts

        return split_conjuncts(body)

    def code_mutants(self, task: Task, limit: int = 10, seed: int = 0) -> list[tuple[str, str]]:
        from veriscale.backends.lean.mutants import lean_code_mutants

        lean = lean_sections(task)
        assert lean is not None
        return [(op, self.code_definition(task, body, lean.code_aux))
                for op, body in lean_code_mutants(task, limit, seed)]

    def spec_mutants(self, task: Task, kind: str = "postcond", limit: int = 10,
                     seed: int = 0) -> list[tuple[str, str]]:
        from veriscale.backends.lean.mutants import lean_spec_mutants

        return lean_spec_mutants(task, kind, limit, seed)

    def trivial_precondition(self, task: Task) -> bool:
        lean = lean_sections(task)
        if lean is None:
            return False
        body = "\n".join(line.split("--")[0] for line in lean.precond.splitlines()).strip()
        return body in ("", "True")

    def ground_truth(self, task: Task) -> tuple[str, tuple[str, str, str, str]]:
        ln = lean_sections(task)
        if ln is None:
            raise ValueError(f"{task.id}: task has no Lean sections")
        return (self.code_definition(task, ln.code, ln.code_aux),
                (ln.precond, ln.postcond, ln.precond_aux, ln.postcond_aux))

    # ------------------------------------------------------------ LLM prompts and answers

    def code_definition(self, task: Task, body: str, code_aux: str = "") -> str:
        """A CodeGen body (VERINA stores bodies) as the full ``def`` after ``code_aux``."""
        from veriscale.backends.lean.render import code_definition

        return code_definition(task, body, code_aux)

    def solution_imports(self, imports: str) -> str:
        return imports  # VERINA merges a solution's imports into CodeGen's file


LEAN = LeanPlugin()

__all__ = ["LEAN", "LeanPlugin"]
