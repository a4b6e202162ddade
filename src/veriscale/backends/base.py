"""The oracle interface every specification language implements.

Every operation is batch-first: it takes one task and *many* items and returns
exactly one result per item, in order. A bad item (ill-typed value, crashing
candidate, timeout) yields a failure result for that item; it never raises.
Stages (expansion, reduction, evaluation) depend on this module only, never on
a concrete backend.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from veriscale.benchmark.model import Implementation, Input, Spec, Task


class Verdict(enum.Enum):
    """What a specification said about one item.

    ``ERROR``: the specification itself failed to answer (it raised, or returned
    something other than a boolean; for Lean, Plausible refuted both P and ¬P).
    A specification is a total function, so this is a wrong answer whichever
    answer was wanted, never an abstention. The ``PLAUSIBLY_*``/``UNREFUTED``
    verdicts carry what VERINA's Plausible stage found, which scoring reads as
    VERINA does: "no counter-example" passes where that claim was wanted.
    """

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"
    ERROR = "error"
    # Plausible's evidence where ``decide`` could not answer (VERINA's stage 2):
    PLAUSIBLY_TRUE = "plausibly_true"  # no counter-example to P found
    PLAUSIBLY_FALSE = "plausibly_false"  # no counter-example to ¬P found
    UNREFUTED = "unrefuted"  # neither P nor ¬P refuted

    @classmethod
    def of(cls, b: bool | None) -> Verdict:
        return cls.UNKNOWN if b is None else (cls.TRUE if b else cls.FALSE)


class Verdicts(list):  # type: ignore[type-arg]
    """A backend's verdicts on a batch of items, with the reason each UNKNOWN stayed
    unknown ("" where there is none to give). A :class:`Verdict` is an enum member and
    carries nothing of its own, so the list carries the reasons: ``verify``, the stage
    records and the report say *why* (no Decidable instance, a timeout, ...)."""

    def __init__(self, verdicts: Iterable[Verdict] = (),
                 reasons: Iterable[str] | None = None) -> None:
        super().__init__(verdicts)
        got = list(reasons) if reasons is not None else []
        self.reasons: list[str] = got if len(got) == len(self) else [""] * len(self)


def progress_owner(backend: Any) -> Any | None:
    """The backend under any wrappers (the oracle cache) that reports its prover
    files through a ``progress`` attribute (Lean, Coq); None when none does."""
    while "progress" not in vars(backend) and getattr(backend, "inner", None) is not None:
        backend = backend.inner
    return backend if "progress" in vars(backend) else None


def reasons_of(verdicts: Sequence[Any]) -> list[str]:
    """Why each UNKNOWN of ``verdicts`` is unknown, "" where nobody said."""
    reasons = getattr(verdicts, "reasons", None)
    if isinstance(reasons, list) and len(reasons) == len(verdicts):
        return [r if v is Verdict.UNKNOWN else "" for v, r in zip(verdicts, reasons, strict=True)]
    return [""] * len(verdicts)


class Label(enum.Enum):
    EXPECTED = "expected"  # satisfies the GT precondition
    UNEXPECTED = "unexpected"  # violates it
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Classification:
    label: Label
    stage: str  # "decide", "plausible", "exec", "syntax", ...
    detail: str = ""


class FailureKind(enum.Enum):
    """Why a check produced no value: the prefix of ``Outcome.error`` before ``:``.

    The one owner of "is this the candidate's fault?": :attr:`inconclusive` kinds
    say the checker could not observe the candidate (a limit, the machine, the
    backend), so scoring, ``verify`` and the caches treat them as UNKNOWN and
    never store them; the others are the candidate's wrong answer (FAIL).
    """

    TIMEOUT = "timeout"  # time limit (per test or per candidate), on the supervisor's clock
    MEMORY = "memory"  # memory limit, as the supervisor saw it trip
    OUTPUT_LIMIT = "output_limit"  # the candidate's result was too large to bring back
    CRASH = "crash"  # the candidate crashed its process (signal, recursion, panic)
    EXIT = "exit"  # the candidate exited
    ERROR = "error"  # the candidate raised an exception
    ILL_TYPED = "ill_typed"  # a value of the wrong type (the candidate's result or input)
    COMPILE = "compile"  # the candidate does not build or was rejected by the screen
    INFRASTRUCTURE = "infrastructure"  # the checker failed: prover died, worker lost ...
    UNSUPPORTED = "unsupported"  # this backend cannot run the check here
    UNKNOWN = "unknown"  # the checker ran but gave no answer (stuck reduction, sorry ...)

    @property
    def inconclusive(self) -> bool:
        """True when the outcome says nothing about the candidate's correctness."""
        return self in _INCONCLUSIVE

    @classmethod
    def of_error(cls, error: str, default: FailureKind | None = None) -> FailureKind:
        """The kind of an error string. An unrecognised prefix is ``default``, by
        default an infrastructure failure: a backend that does not speak the
        contract must not turn its own trouble into the candidate's FAIL."""
        prefix = error.split(":", 1)[0].strip()
        try:
            return cls(prefix)
        except ValueError:
            return default if default is not None else cls.INFRASTRUCTURE


_INCONCLUSIVE = frozenset({
    FailureKind.TIMEOUT, FailureKind.MEMORY,
    FailureKind.INFRASTRUCTURE, FailureKind.UNSUPPORTED, FailureKind.UNKNOWN,
})


def settled(error: str | None, default: FailureKind) -> bool:
    """Whether an answer that is ``None`` or an error text (``check_inputs``,
    ``compile``) says something about the candidate: ``None``, or a failure of its own
    (not a timeout, not the machine). Text without a known prefix is ``default``'s."""
    return error is None or not FailureKind.of_error(str(error), default).inconclusive


@dataclass(frozen=True)
class Outcome:
    """The result of running an implementation on one input.

    ``error`` is ``"<kind>: detail"`` with a :class:`FailureKind` prefix
    (``"timeout"``, ``"crash: ..."``, ``"infrastructure: ..."``, ...).
    """

    ok: bool
    value: Any = None  # canonical typed value when ok
    error: str = ""

    @property
    def kind(self) -> FailureKind | None:
        """The failure kind (``None`` when ok)."""
        return None if self.ok else FailureKind.of_error(self.error)

    @property
    def inconclusive(self) -> bool:
        """Not ok, and not the candidate's fault: the verdict is UNKNOWN."""
        kind = self.kind
        return kind is not None and kind.inconclusive

    @property
    def failure_kind(self) -> str:
        """The error's prefix as text (kept for older callers; prefer :attr:`kind`)."""
        return "" if self.ok else self.error.split(":", 1)[0]


def prover_processes(processes: int, extra: Mapping[str, Any]) -> int | None:
    """Prover processes started, where a backend's files may be served by long-lived
    provers (Lean sessions): its files, less those served, plus the servers' starts.
    None where no file could be served (then every file was a process)."""
    if "served_files" not in extra:
        return None
    return processes - extra["served_files"] + extra.get("session_starts", 0)


@dataclass
class BackendStats:
    """Counters a backend keeps so that runs can report cost (e.g. Lean processes)."""

    processes: int = 0
    checks: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    unknowns: dict[str, int] = field(default_factory=dict)
    """UNKNOWN verdicts of pre/postconditions by cause, ``"<which>: <cause>"``: a
    :class:`Verdict` carries no reason, so the backend that read it counts it."""

    def count_unknowns(self, op: str, spec: Spec | None, details: Sequence[str]) -> None:
        """Count the reasons ``details`` of UNKNOWN verdicts of one request ``op``
        (``precondition_holds``/``postcondition_holds``) about ``spec`` (None: the
        ground truth); a backend called from several threads holds its lock."""
        from veriscale.backends.causes import unknown_cause

        which = f"{'gt' if spec is None else 'spec'} {op.split('_')[0]}"
        for detail in details:
            key = f"{which}: {unknown_cause(detail)}"
            self.unknowns[key] = self.unknowns.get(key, 0) + 1


@dataclass(frozen=True)
class CodeCoverage:
    """How much of a task's ground-truth code some inputs ran: statements and
    branches (coverage.py's measures), over the code that is not the pre- or
    postcondition. ``missing_lines``: statements no input ran."""

    lines_covered: int
    lines_total: int
    branches_covered: int
    branches_total: int
    missing_lines: tuple[int, ...] = ()


class CoverageMeter(Protocol):
    """A backend that can measure :class:`CodeCoverage` of a task's reference (the
    Python backend); the others say why not (:data:`HINTS` ``coverage_unavailable``)."""

    def reference_coverage(self, task: Task, inputs: Sequence[Input]) -> CodeCoverage: ...


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


OPERATIONS = (
    "check_inputs", "classify", "run", "precondition_holds", "postcondition_holds", "compile",
    "test_outputs",
)
"""The protocol's operations, by the names :class:`BatchBackend` requests use
(``test_outputs`` only for an :class:`OutputTester`)."""

Request = tuple[str, tuple[Any, ...]]
"""``(operation, args)``: one protocol call, e.g. ``("classify", (task, inputs))``."""


HINTS: dict[str, Any] = {
    "classify_checks_syntax": False,
    "default_cell_budget": 0,
    "plausible_unavailable": "",
    "side_by_side": 1,
    "coverage_unavailable": "",
    "answer_revision": 0,
}
"""Optional attributes a backend may declare, with the value meant when it does not:
``classify_checks_syntax`` (its ``classify`` also answers the syntax filter),
``default_cell_budget`` ((expected input, adversary) cells per task when the config
sets none; 0 = every cell), ``plausible_unavailable`` (why property-based search
is off), ``side_by_side`` (how many requests a backend without the batch capability
answers at once, each from its own thread: its calls must be thread-safe),
``coverage_unavailable`` (why it cannot measure the reference's code coverage, where
it is no :class:`CoverageMeter`), ``answer_revision`` (raised whenever the backend
answers some check differently: the oracle cache's identity holds it). The
wrappers (oracle cache, coalescing proxy) pass every hint on through :func:`hint`,
so wrapping a backend never changes what a stage does."""


def hint(backend: Any, name: str) -> Any:
    """``backend``'s value for the hint ``name`` (see :data:`HINTS`), or its default."""
    default = HINTS[name]
    got = getattr(backend, name, default)
    return got if isinstance(got, type(default)) else default


ProgressHook = Callable[[str, int, int], None]
"""A prover backend's ``progress`` attribute, when a display sets it: called with
``("planned", files, checks)`` when a round is packed, ``("checks", 0, checks)`` as a
running file gets past more of its checks (where the prover reports as it goes), and
``("done", 1, checks)`` with the rest of a file's checks as it finishes."""


StopsHook = Callable[[Any, str], None]
"""A prover backend's optional ``keep_stops(store, namespace)``: keep its memory of the
checks that stopped the prover (:mod:`veriscale.backends.stops`) in ``store`` under
``namespace`` (the oracle's identity), so a resumed run does not pay them again. The
pipeline calls it with the run directory's oracle cache."""


AnswersHook = Callable[[list[tuple[tuple[Any, ...], int, Any]]], None]
"""A prover backend's ``on_answers`` attribute, when the oracle cache sets it: called
with ``(args, item, answer)`` triples as a batch's answers become final, before
``evaluate_many`` returns (``args``: the very tuple of the request, ``item``: the
index of one of its items, ``answer``: what the protocol returns for it). A stage of
a WASM Lean run is one batch of up to an hour; what a killed run had answered is
then in the cache, not lost. A conclusive answer is final when told; an inconclusive
one (UNKNOWN, a timeout) may still be revisited by a later round of the batch, so a
receiver keeps only conclusive ones (as the oracle cache does anyway)."""


def notify_answers(hook: AnswersHook | None, told: list[tuple[tuple[Any, ...], int, Any]]
                   ) -> None:
    """Tell ``hook`` (if any); storing early must never break an oracle round."""
    if hook is not None and told:
        try:
            hook(told)
        except Exception:
            logging.getLogger(__name__).warning("storing early oracle answers failed",
                                                exc_info=True)


def notify_progress(hook: ProgressHook | None, event: str, files: int, checks: int) -> None:
    """Tell ``hook`` (if any); a display must never break an oracle round."""
    if hook is not None:
        try:
            hook(event, files, checks)
        except Exception:
            logging.getLogger(__name__).debug("progress hook failed", exc_info=True)


@runtime_checkable
class BatchBackend(Protocol):
    """The optional batch capability: many protocol calls, of mixed kinds and tasks, in
    one call (WASM Lean pays a process start per call, so it wants them all at once).

    ``evaluate_many`` returns one answer list per request, what the protocol method
    would return (``compile``: a one-element list). Stages never call it directly:
    :mod:`veriscale.backends.dispatch` is the one caller, and it guarantees one
    result per item whatever the backend does.
    """

    def evaluate_many(self, requests: Sequence[Request]) -> list[list[Any]]:
        """Answer every request; may raise (the dispatcher turns that into failures)."""


@runtime_checkable
class OutputTester(Protocol):
    """The optional capability of comparing outputs in the backend's own language
    (Lean's ``==``, as VERINA's code tests do) instead of as values here."""

    def test_outputs(self, task: Task, impl: Implementation | None,
                     pairs: Sequence[tuple[Input, Any]]) -> list[Outcome]:
        """Per (input, expected): ``Outcome(True, value=<equal?>)``, or why not."""
