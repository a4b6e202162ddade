"""The language plug-in seam: what stages need to know about a specification language.

Stages, the LLM layer and evaluation ask :func:`plugin_for` (a task's or a
language's plug-in), :func:`plugin_for_dir` (the format of a task folder) or
:func:`plugin_for_backend` instead of branching on a language. Each plug-in lives
in ``veriscale.backends.<language>.plugin``; a new language is one folder under
``backends/`` plus one line in ``_PLUGINS`` (or, from outside the package, one call of
:func:`register_language`): the plug-in names its backend class too. Its tasks carry
their text as ``Task.sections[<name>]``, an object of its own.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from veriscale.benchmark.model import Task
from veriscale.benchmark.verina.folder import SuiteRows
from veriscale.values import ValueType

SPEC_PRE_MARKER = "Precondition Implementation"
SPEC_POST_MARKER = "Postcondition Implementation"
ADVERSARY_MARKER = "Adversarial Implementation"
"""The comment lines that open each part of a model's answer: the prompts ask for
them and every plug-in's answer parser reads them."""


@dataclass(frozen=True)
class Template:
    """One offline adversary: the red-team strategy, what it does, and its complete code."""

    strategy: str  # constant-return, input-echo, trivial-synthesis, malicious-deletion, ...
    detail: str
    code: str


def assemble_templates(
    strategies: Iterable[tuple[str, str, str]],
    define: Callable[[str], str],
    *,
    wraps_reference: bool,
    constants: Sequence[str],
    edge: tuple[str, str] | None,
    perturbations: Iterable[tuple[str, str]],
    guarded: Callable[[str, str], str],
    bound: Callable[[str], str],
) -> list[Template]:
    """The offline red team in the order every language lists it: ``define(expr)``
    for each (strategy, detail, expr) over the signature; then, where the ground
    truth can be wrapped, the edge case (``guarded(cond, constant)``: the constant
    where ``cond`` holds, the reference elsewhere) and each near miss
    (``bound(expr)``: ``expr`` over the reference's result). Only the syntax is the
    language's; the choice and order of adversaries is one fact, kept here."""
    out = [Template(s, d, define(e)) for s, d, e in strategies]
    if not wraps_reference:
        return out
    if edge and constants:
        label, cond = edge
        out.append(Template("edge-case", f"{label}:{constants[0]}", guarded(cond, constants[0])))
    out.extend(Template("near-miss", label, bound(expr)) for label, expr in perturbations)
    return out


@dataclass(frozen=True)
class Weakening:
    """One weaker GT postcondition: ``label`` says how (``drop:2``, ``weaken:1:le``...)."""

    label: str
    body: str


@dataclass(frozen=True)
class PromptParts:
    """The language's parts of the specification and red-team prompts.

    ``adversary_marker`` holds ``{i}``, the index of the implementation it opens.
    """

    pre_sig: str  # the precondition's header, as the model must write it
    post_sig: str
    impl_sig: str  # the implementation's header
    spec_rules: str  # how to write the specification in this language
    forbidden: str  # what adversarial code must never do
    loopholes: str  # questions that find what a flawed postcondition forgot
    strategies: str  # the red-team strategies, with this language's constants
    pre_marker: str  # the comment line before the precondition in the answer
    post_marker: str
    adversary_marker: str


class TaskFormat(Protocol):
    """The role of reading and writing a language's task folders."""

    format_name: str  # the task directory format's name in the run manifest
    task_files: tuple[str, ...]  # a folder holding any one of these is a task folder

    def owns_task_dir(self, path: Path) -> bool: ...
    def load_task_dir(self, path: Path) -> tuple[Task | None, list[Any]]: ...
    def write_task_dir(self, task: Task, path: Path) -> Path: ...
    load_warnings: tuple[str, ...]  # load issue kinds of this format that are only warnings

    def lint_rows(self, path: Path, task: Task) -> SuiteRows:
        """The rows ``validate`` judges for a folder whose task was built."""

    def raw_suite(self, path: Path) -> tuple[Any, Any]:
        """The parsed test rows and reject rows of a folder (``None`` where unreadable)."""


class ValueSyntax(Protocol):
    """The role of writing the neutral types and values in the language's syntax."""

    def parse_type(self, text: str) -> ValueType: ...
    def type_text(self, t: ValueType) -> str: ...
    def render_value(self, t: ValueType, value: Any) -> str: ...
    def parse_value(self, t: ValueType, text: str) -> Any: ...
    def input_ok(self, task: Task, inp: Any) -> bool:
        """May a seed or mutant be this input (Coq: unary nat within a bound, ASCII
        text)? Benchmark tests are never filtered."""


class CodeScreen(Protocol):
    """The role of refusing untrusted code before it runs."""

    screen_name: str  # which checker screens untrusted code, for the run record

    def screen(self, code: str) -> str | None: ...
    def screen_body(self, body: str) -> str | None: ...


class RedTeam(Protocol):
    """The role of breaking the ground truth offline: adversaries, weakened
    postconditions, mutants, and the ground truth they start from."""

    def adversary_templates(self, task: Task) -> list[Any]: ...
    def weakened_postconditions(self, task: Task) -> list[Any]: ...
    def split_conjuncts(self, body: str) -> list[str]: ...
    def code_mutants(self, task: Task, limit: int = 10, seed: int = 0
                     ) -> list[tuple[str, str]]: ...
    def spec_mutants(self, task: Task, kind: str = "postcond", limit: int = 10,
                     seed: int = 0) -> list[tuple[str, str]]: ...
    def trivial_precondition(self, task: Task) -> bool:
        """Is the task's GT precondition ``True``?"""

    def ground_truth(self, task: Task) -> tuple[str, tuple[str, str, str, str]]:
        """GT code as a complete definition, and (precond, postcond, precond_aux, postcond_aux)."""

    def code_definition(self, task: Task, body: str, code_aux: str = "") -> str:
        """A candidate's code body as the complete definition the backend runs."""

    def solution_imports(self, imports: str) -> str:
        """What a solution line's ``imports`` field contributes to its implementation."""


class PromptingRole(Protocol):
    """The role the LLM layer asks of a language: the language's parts of the prompts,
    and the reading of its code back out of a model's answer."""

    def prompt_rules(self) -> str: ...
    def code_fence(self) -> str: ...
    def code_header(self, task: Task) -> str: ...
    def prompt_parts(self, task: Task) -> PromptParts: ...
    def gt_precondition_text(self, task: Task) -> str:
        """The GT precondition definition (with its helpers), as shown to a model."""

    def spec_texts(self, task: Task, spec: Any) -> tuple[str, str]:
        """(precondition, postcondition) definitions of a candidate ``Spec`` as shown to
        the red team, the GT where the spec has none."""

    def parse_spec_answer(self, text: str, task: Task, origin: str = "", *,
                          truncated: bool = False) -> Any:
        """A ``Spec`` from a model's answer; raises ``ParseError`` when none is usable."""

    @property
    def answer_syntax(self) -> Any:
        """How this language's code sits in a model's red-team answer, read by
        :func:`veriscale.llm.parsers.parse_adversaries`; None for a plug-in that
        parses its answers itself (its ``parse_adversary_answer``)."""


@runtime_checkable
class LanguagePlugin(TaskFormat, ValueSyntax, CodeScreen, RedTeam, PromptingRole, Protocol):
    """Everything a stage needs from one specification language: its roles, as
    VERINA's ITP layer splits a prover (task format, value syntax, screen, red team,
    prompting), and the name of its oracle backend. Code that needs one role types
    its argument by that role."""

    name: str  # "coq"
    display_name: str  # "Coq (Rocq)"
    backend: str  # the registry name of its oracle backend
    backend_path: str  # "module:Class" of that backend (imported when one is made)
    backend_takes_seed: bool  # its backend takes the run's seed (``seed=``)
    backend_takes_runner: bool  # its backend takes ``runner=`` (``--runner``)
    cheap_evaluation: bool  # timing the evaluation is cheap enough to do by default


class ModuleLLMParts:
    """The LLM-side methods of a plug-in whose language package has a ``prompting`` and
    an ``answers`` module (Lean, Python), so each plug-in states them once.

    ``prompting``: ``precond_header`` / ``postcond_header`` / ``code_header`` (of a
    signature), ``COMMENT``, ``SPEC_RULES``, ``FORBIDDEN``, ``LOOPHOLES``, ``STRATEGIES``,
    ``gt_precondition_text``, ``spec_texts``. ``answers``: ``ANSWER_SYNTAX`` (read by
    :func:`veriscale.llm.parsers.parse_adversaries`) and ``parse_spec``.
    """

    name: str
    package: str  # "veriscale.backends.lean"
    fence: str  # the code fence tag of prompts

    def _module(self, which: str) -> Any:
        return importlib.import_module(f"{self.package}.{which}")

    @property
    def answer_syntax(self) -> Any:
        return self._module("answers").ANSWER_SYNTAX

    def prompt_rules(self) -> str:
        return self._module("prompting").SPEC_RULES

    def code_fence(self) -> str:
        return self.fence

    def code_header(self, task: Task) -> str:
        return self._module("prompting").code_header(task.signature)

    def prompt_parts(self, task: Task) -> PromptParts:
        p, sig = self._module("prompting"), task.signature
        return PromptParts(
            pre_sig=p.precond_header(sig), post_sig=p.postcond_header(sig),
            impl_sig=p.code_header(sig), spec_rules=p.SPEC_RULES, forbidden=p.FORBIDDEN,
            loopholes=p.LOOPHOLES, strategies=p.STRATEGIES,
            pre_marker=f"{p.COMMENT} {SPEC_PRE_MARKER}",
            post_marker=f"{p.COMMENT} {SPEC_POST_MARKER}",
            adversary_marker=f"{p.COMMENT} {ADVERSARY_MARKER} {{i}}",
        )

    def gt_precondition_text(self, task: Task) -> str:
        return self._module("prompting").gt_precondition_text(task)

    def spec_texts(self, task: Task, spec: Any) -> tuple[str, str]:
        return self._module("prompting").spec_texts(task, spec)

    def parse_spec_answer(self, text: str, task: Task, origin: str = "", *,
                          truncated: bool = False) -> Any:
        return self._module("answers").parse_spec(text, task.signature, origin,
                                                  truncated=truncated)



# Registration order is the order in which task folders are offered to the plug-ins,
# each of which owns the folders holding its task file (a folder with ``task.lean``
# and ``task.v`` is a Lean task).
_PLUGINS = {
    "python": ("veriscale.backends.python.plugin", "PYTHON"),
    "lean": ("veriscale.backends.lean.plugin", "LEAN"),
    "coq": ("veriscale.backends.coq.plugin", "COQ"),
}

DEFAULT_LANGUAGE = "lean"
"""The language of a benchmark whose tasks are of mixed or no known language, and the
reader of a task folder no plug-in owns (VERINA's: it names the missing task file)."""


def register_language(name: str, module: str, attr: str) -> None:
    """Add the plug-in ``module.attr`` for language ``name`` (offered task folders after
    those already registered). A plug-in may live in any importable package."""
    if name in _PLUGINS and _PLUGINS[name] != (module, attr):
        raise ValueError(f"language {name!r} is already registered to {_PLUGINS[name]}")
    _PLUGINS[name] = (module, attr)

def languages() -> list[str]:
    return list(_PLUGINS)


def language_of(task: Task) -> str:
    """The specification language a task is written in (the sections it carries)."""
    for name in _PLUGINS:
        if task.section(name) is not None:
            return name
    return DEFAULT_LANGUAGE


def plugin_for(language: str | Task) -> LanguagePlugin:
    """The plug-in of ``language`` (or of a task's language); ``LookupError`` if none."""
    name = language_of(language) if isinstance(language, Task) else language
    if name not in _PLUGINS:
        raise LookupError(f"no language plug-in for {name!r} (have {', '.join(_PLUGINS)})")
    module, attr = _PLUGINS[name]
    return getattr(importlib.import_module(module), attr)


def show_value(task: Task, t: ValueType, value: Any) -> str:
    """``value`` of type ``t`` as ``task``'s language writes it, for messages (repr
    where the language has no plug-in or no literal for it)."""
    try:
        return str(plugin_for(task).render_value(t, value))
    except (LookupError, ValueError):
        return repr(value)


def plugins() -> list[LanguagePlugin]:
    return [plugin_for(name) for name in _PLUGINS]


def plugin_for_dir(path: Path) -> LanguagePlugin:
    """The plug-in whose task directory format ``path`` is (first owner in order); a
    folder no plug-in owns but holding some plug-in's task file (``task.json``) is
    read by :data:`DEFAULT_LANGUAGE`'s, which says what is missing."""
    for plugin in plugins():
        if plugin.owns_task_dir(path):
            return plugin
    if any((Path(path) / f).exists() for f in task_files()):
        return plugin_for(DEFAULT_LANGUAGE)
    raise LookupError(f"{path}: no language plug-in reads this task folder")


def task_files() -> tuple[str, ...]:
    """The file names that make a folder a task folder, over every plug-in."""
    return tuple(dict.fromkeys(f for p in plugins() for f in p.task_files))


def plugin_for_backend(backend: str) -> LanguagePlugin | None:
    """The plug-in whose oracle backend is named ``backend`` (None: not a language's)."""
    return next((p for p in plugins() if p.backend == backend), None)
