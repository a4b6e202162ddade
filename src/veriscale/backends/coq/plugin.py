"""The Coq language plug-in (see :mod:`veriscale.backends.language`).

The plug-in's roles are served from their own modules, as for Lean and Python:
adversary templates (:mod:`.templates`), flawed specifications (:mod:`.weaken`),
mutants (:mod:`.mutants`), prompt rules (:mod:`.prompting`) and the reading of LLM
answers (:mod:`.answers`); the format and the values from :mod:`.format`,
:mod:`.types` and :mod:`.literal`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from veriscale.backends.coq import format as F
from veriscale.backends.coq.answers import (
    ADVERSARY,
    SPEC_POST,
    SPEC_PRE,
    parse_adversary_answer,
    parse_spec_answer,
    postcond_header,
    precond_header,
)
from veriscale.backends.coq.lexer import split_conjuncts
from veriscale.backends.coq.literal import is_ascii, nat_magnitude, parse_coq, to_coq
from veriscale.backends.coq.mutants import code_mutants, spec_mutants
from veriscale.backends.coq.prompting import PROMPT_RULES
from veriscale.backends.coq.safety import screen, screen_term
from veriscale.backends.coq.sections import coq_sections
from veriscale.backends.coq.templates import adversary_templates, code_definition, code_header
from veriscale.backends.coq.types import coq_type, parse_coq_type
from veriscale.backends.coq.weaken import weakened_postconditions
from veriscale.backends.language import PromptParts, Template, Weakening
from veriscale.benchmark.model import Task
from veriscale.benchmark.verina.folder import SuiteRows
from veriscale.values import ValueType

NAT_BOUND = 1_000
"""Largest ``nat`` a seed or mutant may hold (unary in Coq: a function of a 10^5 input
can build 10^15 cells). The backend's own ``nat_bound`` (what it agrees to evaluate
at all) is larger, so that a benchmark's own tests are still checked."""


class CoqPlugin:
    name = "coq"
    display_name = "Coq"
    backend = "coq"
    backend_path = "veriscale.backends.coq.backend:CoqBackend"  # its class, imported only when a backend is made
    format_name = "coq"
    task_files = ("task.v", "task.json")
    backend_takes_seed = False  # its backend seeds the candidates' ``random`` from the run's seed
    backend_takes_runner = False  # its backend takes ``--runner`` (which prover binary)
    cheap_evaluation = False  # ``time_evaluation = "auto"`` times it (no prover start-up cost)
    screen_name = "veriscale.backends.coq.safety"

    def owns_task_dir(self, path: Path) -> bool:
        return F.is_coq_task_dir(path)

    def load_task_dir(self, path: Path) -> tuple[Task | None, list[Any]]:
        return F.load_task_dir(path)

    def write_task_dir(self, task: Task, path: Path) -> Path:
        return F.write_task_dir(task, path)

    load_warnings = F.LOAD_WARNINGS

    def lint_rows(self, path: Path, task: Task) -> SuiteRows:
        return F.lint_rows(task)

    def raw_suite(self, path: Path) -> tuple[Any, Any]:
        return F.raw_suite(path)

    def parse_type(self, text: str) -> ValueType:
        return parse_coq_type(text)

    def type_text(self, t: ValueType) -> str:
        return coq_type(t)

    def render_value(self, t: ValueType, value: Any) -> str:
        return to_coq(t, value)

    def parse_value(self, t: ValueType, text: str) -> Any:
        return parse_coq(t, text)

    def input_ok(self, task: Task, inp: Any) -> bool:
        """Inputs within the nat bound (large magnitudes stay for ``Z``), with ASCII
        strings and chars only (see :func:`is_ascii`)."""
        return all(nat_magnitude(p.type, v) <= NAT_BOUND and is_ascii(p.type, v)
                   for p, v in zip(task.signature.params, inp, strict=False))

    def screen(self, code: str) -> str | None:
        return screen(code)

    def screen_body(self, body: str) -> str | None:
        return screen_term(body)

    def adversary_templates(self, task: Task) -> list[Template]:
        return adversary_templates(task)

    def weakened_postconditions(self, task: Task) -> list[Weakening]:
        return weakened_postconditions(task)

    def split_conjuncts(self, body: str) -> list[str]:
        return split_conjuncts(body)

    def code_mutants(self, task: Task, limit: int = 10, seed: int = 0
                     ) -> list[tuple[str, str]]:
        return code_mutants(task, limit, seed)

    def spec_mutants(self, task: Task, kind: str = "postcond", limit: int = 10,
                     seed: int = 0) -> list[tuple[str, str]]:
        return spec_mutants(task, kind, limit)

    def trivial_precondition(self, task: Task) -> bool:
        coq = coq_sections(task)
        return coq is not None and coq.precond.strip() in ("", "true")

    def ground_truth(self, task: Task) -> tuple[str, tuple[str, str, str, str]]:
        """The GT code (complete definition) and (precond, postcond, their aux)."""
        c = coq_sections(task)
        assert c is not None
        return (self.code_definition(task, c.code, c.code_aux),
                (c.precond, c.postcond, c.precond_aux, c.postcond_aux))

    def prompt_rules(self) -> str:
        return PROMPT_RULES

    def code_fence(self) -> str:
        return "coq"

    def code_header(self, task: Task) -> str:
        return code_header(task)

    def prompt_parts(self, task: Task) -> PromptParts:
        """The language parts of the spec and red-team prompts."""
        return PromptParts(
            pre_sig=precond_header(task), post_sig=postcond_header(task),
            impl_sig=code_header(task), spec_rules=PROMPT_RULES, forbidden=PROMPT_RULES,
            pre_marker=SPEC_PRE, post_marker=SPEC_POST, adversary_marker=ADVERSARY + " {i} *)",
            loopholes="- does it check `length result` but not the elements?\n"
                      "- does it check sortedness but not that the elements come from "
                      "the input?\n- is a `forallb` over an empty list vacuously true?",
            strategies="constant return (`0%Z`, `[]`, `\"\"%string`, `false`, `None`); "
                       "input echoing; trivial synthesis (`repeat 0 n`, `seq 0 n`); "
                       "malicious deletion (return `[]`); edge-case exploitation")

    def gt_precondition_text(self, task: Task) -> str:
        from veriscale.backends.base import Spec

        return self.spec_texts(task, Spec())[0]

    def spec_texts(self, task: Task, spec: Any) -> tuple[str, str]:
        """(precondition, postcondition) definitions of ``spec``, the GT where it has none."""
        s = coq_sections(task)
        if s is None:
            return "", ""
        pre_body = spec.precond if spec.precond is not None else s.precond
        post_body = spec.postcond if spec.postcond is not None else s.postcond
        pre_aux = spec.precond_aux if spec.precond is not None else s.precond_aux
        post_aux = spec.postcond_aux if spec.postcond is not None else s.postcond_aux
        pre = f"{pre_aux.strip()}\n\n{precond_header(task)}\n  {pre_body.strip()}.".strip()
        post = f"{post_aux.strip()}\n\n{postcond_header(task)}\n  {post_body.strip()}.".strip()
        return pre, post

    def parse_spec_answer(self, text: str, task: Task, origin: str = "", *,
                          truncated: bool = False) -> Any:
        return parse_spec_answer(text, task, origin)

    answer_syntax = None  # red-team answers are read by parse_adversary_answer below

    def parse_adversary_answer(self, text: str, task: Task, origin: str = "",
                               target_spec: str = "", *, truncated: bool = False
                               ) -> tuple[list[Any], list[str]]:
        return parse_adversary_answer(text, task, origin, target_spec)

    def solution_imports(self, imports: str) -> str:
        return ""  # a Coq candidate brings no imports of its own

    def code_definition(self, task: Task, body: str, code_aux: str = "") -> str:
        return code_definition(task, body, code_aux)


COQ = CoqPlugin()

__all__ = ["COQ", "NAT_BOUND", "CoqPlugin"]
