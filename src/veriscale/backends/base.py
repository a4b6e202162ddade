"""The oracle interface every specification language implements.

Every operation is batch-first: it takes one task and *many* items and returns
exactly one result per item, in order. A bad item (ill-typed value, crashing
candidate, timeout) yields a failure result for that item; it never raises.
Stages (expansion, reduction, evaluation) depend on this module only, never on
a concrete backend.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from veriscale.benchmark.model import Input, Task


class Verdict(enum.Enum):
    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"

    @classmethod
    def of(cls, b: bool | None) -> Verdict:
        return cls.UNKNOWN if b is None else (cls.TRUE if b else cls.FALSE)


class Label(enum.Enum):
    EXPECTED = "expected"  # satisfies the GT precondition
    UNEXPECTED = "unexpected"  # violates it
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Classification:
    label: Label
    stage: str  # "decide", "plausible", "exec", "syntax", ...
    detail: str = ""


@dataclass(frozen=True)
class Outcome:
    """The result of running an implementation on one input."""

    ok: bool
    value: Any = None  # canonical typed value when ok
    error: str = ""  # "timeout", "crash: ...", "ill_typed: ...", "compile: ..." when not ok

    @property
    def failure_kind(self) -> str:
        return "" if self.ok else self.error.split(":", 1)[0]


@dataclass(frozen=True)
class Implementation:
    """Candidate code for the task's function (an adversary, an LLM solution, a mutant).

    ``code`` is a complete definition of the task function in the backend's
    language (Lean: ``def <name> ... :=``; Python: ``def <name>(...)``), with any
    helpers before it.
    """

    code: str
    id: str = ""
    strategy: str = ""  # red-team strategy or mutation operator
    origin: str = ""  # "offline", "llm:<model>", "mutant"
    target_spec: str = ""  # id of the flawed spec it was written against


@dataclass(frozen=True)
class Spec:
    """Candidate pre/postconditions in the backend's language.

    Lean: bodies, as VERINA stores them (``precond`` is the body of
    ``F_precond``), with aux definitions. Python: complete ``def precondition``
    / ``def postcondition`` sources with their helpers.
    ``None`` means "use the ground truth".
    """

    precond: str | None = None
    postcond: str | None = None
    precond_aux: str = ""
    postcond_aux: str = ""
    imports: str = ""
    id: str = ""
    origin: str = ""


@dataclass
class BackendStats:
    """Counters a backend keeps so that runs can report cost (e.g. Lean processes)."""

    processes: int = 0
    checks: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    name: str
    stats: BackendStats

    def check_inputs(self, task: Task, inputs: Sequence[Input]) -> list[str | None]:
        """Syntax/type filter: ``None`` when the input is usable, else the reason."""

    def classify(self, task: Task, inputs: Sequence[Input]) -> list[Classification]:
        """Decide each input against the GT precondition."""

    def run(
        self, task: Task, impl: Implementation | None, inputs: Sequence[Input]
    ) -> list[Outcome]:
        """Run ``impl`` (``None``: the reference implementation) on each input."""

    def precondition_holds(
        self, task: Task, spec: Spec | None, inputs: Sequence[Input]
    ) -> list[Verdict]:
        """Does the (candidate, or GT when ``spec`` is None) precondition hold?"""

    def postcondition_holds(
        self, task: Task, spec: Spec | None, pairs: Sequence[tuple[Input, Any]]
    ) -> list[Verdict]:
        """Does the postcondition accept ``output`` for ``input``, for each pair?"""

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        """``None`` when the candidate code/spec is accepted, else the error text."""

    def close(self) -> None:
        """Release workers and processes."""
