"""The language plug-in seam: what stages need to know about a specification language.

Stages, the LLM layer and evaluation ask :func:`plugin_for` instead of branching
on a language. Coq is served fully through this interface
(``veriscale.backends.coq.plugin``); Lean and Python still live in their
historical places and are to move behind the same interface (issue 12 §1).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from veriscale.benchmark.model import Task
from veriscale.values import LeanType


@runtime_checkable
class LanguagePlugin(Protocol):
    """Everything a stage needs from one specification language."""

    name: str  # "coq"
    display_name: str  # "Coq (Rocq)"
    backend: str  # the registry name of its oracle backend

    # task format
    def owns_task_dir(self, path: Path) -> bool: ...
    def load_task_dir(self, path: Path) -> tuple[Task | None, list[Any]]: ...
    def write_task_dir(self, task: Task, path: Path) -> Path: ...

    # types and values
    def parse_type(self, text: str) -> LeanType: ...
    def type_text(self, t: LeanType) -> str: ...
    def render_value(self, t: LeanType, value: Any) -> str: ...
    def parse_value(self, t: LeanType, text: str) -> Any: ...
    def nat_bound(self) -> int | None:
        """Largest ``Nat`` the language can evaluate cheaply (None: no bound)."""

    def input_ok(self, task: Task, inp: Any) -> bool:
        """Can the language evaluate this input (Coq: unary nat within the bound)?"""

    # untrusted code
    def screen(self, code: str) -> str | None: ...
    def screen_body(self, body: str) -> str | None: ...

    # offline red team, weakenings, mutants
    def adversary_templates(self, task: Task) -> list[Any]: ...
    def weakened_postconditions(self, task: Task) -> list[Any]: ...
    def split_conjuncts(self, body: str) -> list[str]: ...
    def code_mutants(self, task: Task, limit: int = 10) -> list[tuple[str, str]]: ...
    def spec_mutants(self, task: Task, kind: str = "postcond", limit: int = 10
                     ) -> list[tuple[str, str]]: ...
    def ground_truth(self, task: Task) -> tuple[str, tuple[str, str, str, str]]:
        """GT code as a complete definition, and (precond, postcond, precond_aux, postcond_aux)."""

    # LLM prompts and answers
    def prompt_rules(self) -> str: ...
    def code_fence(self) -> str: ...
    def code_header(self, task: Task) -> str: ...
    def code_definition(self, task: Task, body: str, code_aux: str = "") -> str:
        """A candidate's code body as the complete definition the backend runs."""


_PLUGINS = {"coq": ("veriscale.backends.coq.plugin", "COQ")}


def language_of(task: Task) -> str:
    """The specification language a task is written in."""
    if getattr(task, "coq", None) is not None:
        return "coq"
    if task.python is not None:
        return "python"
    return "lean"


def has_plugin(language: str) -> bool:
    return language in _PLUGINS


def plugin_for(language: str | Task) -> LanguagePlugin:
    """The plug-in of ``language`` (or of a task's language); ``LookupError`` if none."""
    name = language_of(language) if isinstance(language, Task) else language
    if name not in _PLUGINS:
        raise LookupError(f"no language plug-in for {name!r} (have {', '.join(_PLUGINS)})")
    module, attr = _PLUGINS[name]
    return getattr(importlib.import_module(module), attr)
