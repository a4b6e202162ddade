"""The Python backend: the oracle for Python-spec tasks, through the sandbox.

Every piece of task or candidate code runs in sandbox workers (each candidate in
a fresh child of an OS-isolated fork server), never here.
Values cross as native Python (``to_native``) and come back through
``from_native`` + ``check`` against the declared type, so an ill-typed result
is a failure, never a value. Ground-truth code is trusted (no static check,
full builtins) but still sandboxed; candidate code (implementations and specs)
is statically checked and runs with restricted builtins and imports.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

from veriscale.backends import isolation
from veriscale.backends.base import (
    BackendStats,
    Classification,
    CodeCoverage,
    FailureKind,
    Implementation,
    Label,
    Outcome,
    Spec,
    Verdict,
    Verdicts,
)
from veriscale.backends.python.format import module_source
from veriscale.backends.python.safety import check_untrusted_python
from veriscale.backends.python.sandbox import (
    CallResult,
    Sandbox,
    SandboxLimits,
    follow_reference,
)
from veriscale.backends.python.sections import python_sections
from veriscale.backends.python.units import call_many_on
from veriscale.benchmark.model import Input, Task
from veriscale.execution import Executor, is_remote
from veriscale.values import check, from_native, to_native

NO_PYTHON = "unsupported: task has no Python specification"

# Sandbox failures that mean the sandbox, not the candidate, failed (a lost worker).
_SANDBOX_TROUBLE = ("crash: no result", "crash: worker keeps losing the module",
                    "crash: sandbox worker failed to start", "compile: crash: sandbox worker")


def outcome_error(error: str) -> str:
    """The sandbox's failure text in the outcome contract: a lost or unstartable
    worker is ``infrastructure`` (UNKNOWN), never the candidate's ``crash``."""
    if error.startswith(_SANDBOX_TROUBLE):
        return "infrastructure: sandbox " + error.split(":", 1)[1].strip()
    return error


def _join(*parts: str) -> str:
    return "\n\n".join(p.strip("\n") for p in parts if p and p.strip()) + "\n"


class PythonBackend:
    """Backend for Python-spec tasks. Options: ``workers`` (pool size), ``timeout``
    (seconds per item), ``candidate_seconds`` (time budget of one candidate, summed
    over the time its tests run), ``memory_mb``, ``cpu_seconds``, ``max_output_bytes`` (one
    result), ``batch_size`` (items per child), ``check_safety`` (static screen of
    candidate code), ``sandbox`` (``auto``/``os``/``none``; default: the process-wide
    choice, see :mod:`veriscale.backends.isolation`), ``seed`` (the run seed, from
    which each candidate's ``random`` is seeded), ``executor`` (where batches run:
    with a remote executor each batch is one unit of it; compile checks stay here).
    Options meant for other backends
    (``runner``...) are ignored and listed in ``stats.extra["ignored_options"]``."""

    name = "python"

    def __init__(self, workers: int = 2, timeout: float = 2.0,
                 candidate_seconds: float = 60.0, memory_mb: int = 512,
                 cpu_seconds: float | None = None, max_output_bytes: int = 1024 * 1024,
                 batch_size: int = 64, check_safety: bool = True, sandbox: str | None = None,
                 seed: int = 0, executor: Executor | None = None, **other: Any) -> None:
        limits = SandboxLimits(timeout=timeout, candidate_seconds=candidate_seconds,
                               memory_mb=memory_mb, cpu_seconds=cpu_seconds,
                               max_output_bytes=max_output_bytes)
        info = isolation.resolve(sandbox) if sandbox is not None else isolation.current()
        self.sandbox = Sandbox(workers=workers, limits=limits, batch_size=batch_size,
                               isolation_info=info, seed=seed)
        self.check_safety = check_safety
        self._spec_errors: dict[tuple[str, str, str], str] = {}
        # (task, part, input) -> the reference's own seconds there (see _waits)
        self._reference_seconds: dict[tuple[str, str, str], float | None] = {}
        self.executor = executor
        self._stats = BackendStats()
        self._stats_lock = threading.Lock()
        self._stats.extra["isolation"] = self.sandbox.describe()
        ignored = sorted(k for k, v in other.items() if v is not None)
        if ignored:
            self._stats.extra["ignored_options"] = ignored

    # -- bookkeeping -----------------------------------------------------------

    @property
    def stats(self) -> BackendStats:
        self._stats.processes = self.sandbox.stats.processes
        self._stats.extra.update(restarts=self.sandbox.stats.restarts,
                                 round_trips=self.sandbox.stats.round_trips)
        return self._stats

    def __enter__(self) -> PythonBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sandbox.close()

    @property
    def side_by_side(self) -> int:
        """Requests answered at once (see ``HINTS``): one per sandbox worker, so
        ``evaluate --mutants`` keeps every core busy; each candidate's time budget
        counts only the time its own chunks run, so a neighbour costs it nothing. A
        remote executor runs calls on the cluster: one at a time from here."""
        return 1 if is_remote(self.executor) else self.sandbox.worker_count

    def _call(self, source: str, funcs: Sequence[str], items: Sequence[Sequence[Any]],
              restricted: bool, fresh: bool = False,
              waits: Sequence[float | None] | None = None) -> list[CallResult]:
        start = time.perf_counter()
        try:
            if is_remote(self.executor):
                assert self.executor is not None
                return call_many_on(self.executor, self.sandbox.limits, self.sandbox.batch_size,
                                    source, funcs, items, restricted, seed=self.sandbox.seed,
                                    sandbox=self.sandbox.isolation.mode, fresh=fresh)
            return self.sandbox.call_many(source, funcs, items, restricted=restricted,
                                          fresh=fresh, waits=waits)
        finally:
            with self._stats_lock:  # requests may run side by side
                self._stats.checks += len(items)
                self._stats.seconds += time.perf_counter() - start

    # -- module assembly -------------------------------------------------------

    def _gt_source(self, task: Task) -> str:
        py = python_sections(task)
        assert py is not None
        return module_source(py)

    def _candidate(self, task: Task, *parts: str) -> tuple[str, str | None]:
        """Module source for candidate code (GT aux first, so helpers are shared)
        and the reason it is rejected statically, if any."""
        own = _join(*parts)
        why = check_untrusted_python(own) if self.check_safety else None
        py = python_sections(task)
        aux = py.aux if py is not None else ""
        return _join(aux, own), why

    def _impl_module(self, task: Task, impl: Implementation | None
                     ) -> tuple[str, list[str], bool, str | None]:
        if impl is None:
            return self._gt_source(task), ["reference"], False, None
        source, why = self._candidate(task, impl.code)
        return source, [task.signature.name, "reference"], True, why

    def _spec_module(self, task: Task, spec: Spec | None, which: str
                     ) -> tuple[str, bool, str | None]:
        body = None if spec is None else (spec.precond if which == "pre" else spec.postcond)
        if body is None:
            return self._gt_source(task), False, None
        assert spec is not None
        aux = spec.precond_aux if which == "pre" else spec.postcond_aux
        source, why = self._candidate(task, spec.imports, aux, body)
        return source, True, why

    # -- the protocol ----------------------------------------------------------

    def check_inputs(self, task: Task, inputs: Sequence[Input]) -> list[str | None]:
        """Typed-value check per parameter, and arity (the function must be callable)."""
        return [self._input_problem(task, inp) for inp in inputs]

    @staticmethod
    def _input_problem(task: Task, inp: Input) -> str | None:
        params = task.signature.params
        if not isinstance(inp, tuple):
            return f"input must be a tuple of {len(params)} values, got {type(inp).__name__}"
        if len(inp) != len(params):
            return f"arity: {len(inp)} values for {len(params)} parameters"
        for p, v in zip(params, inp, strict=True):
            why = check(p.type, v)
            if why:
                return f"{p.name}: {why}"
        return None

    def _native_inputs(self, task: Task, inputs: Sequence[Input]
                       ) -> tuple[list[list[Any]], dict[int, str]]:
        """Native argument lists for well-typed inputs, and the problem of each bad one."""
        natives: list[list[Any]] = []
        bad: dict[int, str] = {}
        for k, inp in enumerate(inputs):
            why = self._input_problem(task, inp)
            if why:
                bad[k] = why
                natives.append([])
                continue
            natives.append([to_native(p.type, v)
                            for p, v in zip(task.signature.params, inp, strict=True)])
        return natives, bad

    def _evaluate(self, source: str, funcs: Sequence[str], natives: list[list[Any]],
                  bad: dict[int, str], restricted: bool,
                  fresh: bool = False,
                  waits: list[float | None] | None = None) -> list[CallResult]:
        """Call on the good items only; bad items get an ``ill_typed`` failure."""
        good = [k for k in range(len(natives)) if k not in bad]
        got = self._call(source, funcs, [natives[k] for k in good], restricted, fresh,
                         None if waits is None else [waits[k] for k in good])
        out = [CallResult(False, error=f"ill_typed: input: {bad[k]}") if k in bad else None
               for k in range(len(natives))]
        for k, r in zip(good, got, strict=True):
            out[k] = r
        return [r for r in out if r is not None]

    def _waits(self, task: Task, origin: str, funcs: Sequence[str],
               natives: list[list[Any]], bad: dict[int, str]) -> list[float | None] | None:
        """Per item, how long to wait for a mutant of the reference (``origin`` is
        ``"mutant"``): :func:`follow_reference` of the reference's own time on that
        input, so a looping mutant costs a fraction of a second, not the limit.
        The reference (``funcs`` of the task's own module) is timed here, on the
        items it has not run yet in this backend's life; any other candidate, and
        every candidate on a remote executor (another machine's clock), gets the
        configured limit."""
        if origin != "mutant" or python_sections(task) is None or is_remote(self.executor):
            return None
        keys = [(task.id, ",".join(funcs), repr(natives[k])) if k not in bad else None
                for k in range(len(natives))]
        with self._stats_lock:
            todo = [k for k, key in enumerate(keys)
                    if key is not None and key not in self._reference_seconds]
        if todo:
            timed = self._call(self._gt_source(task), funcs, [natives[k] for k in todo], False)
            with self._stats_lock:
                # real sandbox calls (in ``checks`` too), counted apart so none hides
                self._stats.extra["reference_timed"] = \
                    self._stats.extra.get("reference_timed", 0) + len(todo)
                for k, r in zip(todo, timed, strict=True):
                    key = keys[k]
                    assert key is not None
                    self._reference_seconds[key] = r.seconds if r.ok else None
        with self._stats_lock:
            return [None if key is None
                    else follow_reference(self._reference_seconds.get(key), self.sandbox.limits)
                    for key in keys]

    def _bool_verdicts(self, results: list[CallResult], key: tuple[str, str, str] | None = None,
                       unknown: list[str] | None = None,
                       unpresented: Collection[int] = ()) -> list[Verdict]:
        """A spec's answers. Raising (whatever the class), crashing or answering a
        non-boolean (of any type or size) is ERROR (a specification is total: that
        is a wrong answer, not an abstention); limits the supervisor saw trip, a
        lost worker and the items ``unpresented`` (an ill-typed input, never sent to
        the worker: known by position, not by a text the candidate could write) are
        UNKNOWN.
        The first ERROR's message is kept under ``key`` for :meth:`spec_error`."""
        out: list[Verdict] = []
        reasons: list[str] = []
        for k, r in enumerate(results):
            reasons.append("")
            if r.ok and isinstance(r.value, bool):
                out.append(Verdict.of(r.value))
                continue
            if r.ok:
                why = f"error: answered {type(r.value).__name__}, not bool"
            else:
                why = outcome_error(r.error)
                kind = FailureKind.of_error(why)
                if kind.inconclusive or k in unpresented or kind is FailureKind.COMPILE:
                    out.append(Verdict.UNKNOWN)
                    reasons[-1] = why
                    if unknown is not None:
                        unknown.append(why)
                    continue
            out.append(Verdict.ERROR)
            if key is not None:
                self._spec_errors.setdefault(key, why)
        return Verdicts(out, reasons)

    def reference_coverage(self, task: Task, inputs: Sequence[Input]) -> CodeCoverage:
        """Statement and branch coverage of the task's reference (and its helpers) by
        ``inputs`` (:class:`~veriscale.backends.base.CoverageMeter`): the reference
        runs in this backend's sandbox, which records each call's line arcs; coverage.py
        analyses them here (:mod:`~veriscale.backends.python.code_coverage`). Inputs
        the reference failed on count nothing (only a returned call reports its arcs)."""
        from veriscale.backends.python import code_coverage

        if python_sections(task) is None:
            raise ValueError(f"{task.id}: no Python sections to measure")
        natives, bad = self._native_inputs(task, inputs)
        good = [natives[k] for k in range(len(natives)) if k not in bad]
        source = self._gt_source(task)
        got = self.sandbox.call_many(source, ["reference"], good, restricted=False, trace=True)
        with self._stats_lock:
            self._stats.checks += len(good)
        return code_coverage.measure(source, [r.arcs or () for r in got])

    def spec_error(self, task: Task, spec: Spec, which: str) -> str | None:
        """The first failure message of ``spec``'s ``which`` ("pre"/"post") half on
        ``task``, when it raised (Verdict.ERROR) in this backend's lifetime."""
        if python_sections(task) is None:
            task = _with_empty_aux(task)
        source, _, _ = self._spec_module(task, spec, which)
        return self._spec_errors.get(_spec_key(task, which, source))

    def classify(self, task: Task, inputs: Sequence[Input]) -> list[Classification]:
        if python_sections(task) is None:
            return [Classification(Label.UNKNOWN, "exec", NO_PYTHON) for _ in inputs]
        natives, bad = self._native_inputs(task, inputs)
        results = self._evaluate(self._gt_source(task), ["precondition"], natives, bad, False)
        out = []
        for k, r in enumerate(results):
            if k in bad:
                out.append(Classification(Label.UNKNOWN, "syntax", bad[k]))
            elif r.ok and isinstance(r.value, bool):
                out.append(Classification(Label.EXPECTED if r.value else Label.UNEXPECTED, "exec"))
            elif r.ok:
                out.append(Classification(Label.UNKNOWN, "exec",
                                          f"precondition returned {type(r.value).__name__}"))
            else:
                out.append(Classification(Label.UNKNOWN, "exec", r.error))
        return out

    def run(self, task: Task, impl: Implementation | None,
            inputs: Sequence[Input]) -> list[Outcome]:
        if python_sections(task) is None:
            if impl is None:
                return [Outcome(False, error=NO_PYTHON) for _ in inputs]
            task = _with_empty_aux(task)
        source, funcs, restricted, why = self._impl_module(task, impl)
        if why:
            return [Outcome(False, error=f"compile: {why}") for _ in inputs]
        natives, bad = self._native_inputs(task, inputs)
        waits = self._waits(task, impl.origin, ["reference"], natives, bad) \
            if impl is not None else None
        results = self._evaluate(source, funcs, natives, bad, restricted, waits=waits)
        return [self._outcome(task, r) for r in results]

    @staticmethod
    def _outcome(task: Task, r: CallResult) -> Outcome:
        """Code results → outcomes: the one place where a worker failure text becomes
        ``Outcome.error`` (its prefix is the failure kind)."""
        if not r.ok:
            return Outcome(False, error=outcome_error(r.error))
        t = task.signature.return_type
        try:
            value = from_native(t, r.value)
        except (ValueError, TypeError) as exc:
            return Outcome(False, error=f"ill_typed: {exc}")
        why = check(t, value)
        if why:
            return Outcome(False, error=f"ill_typed: {why}")
        return Outcome(True, value=value)

    def precondition_holds(self, task: Task, spec: Spec | None,
                           inputs: Sequence[Input]) -> list[Verdict]:
        return self._holds(task, spec, "pre", inputs, lambda natives: natives)

    def postcondition_holds(self, task: Task, spec: Spec | None,
                            pairs: Sequence[tuple[Input, Any]]) -> list[Verdict]:
        t = task.signature.return_type
        outputs = [out for _, out in pairs]
        bad_outputs = {k: why for k, out in enumerate(outputs) if (why := check(t, out))}

        def with_result(natives: list[list[Any]]) -> list[list[Any]]:
            return [[*args, to_native(t, outputs[k])] if k not in bad_outputs else args
                    for k, args in enumerate(natives)]

        return self._holds(task, spec, "post", [inp for inp, _ in pairs], with_result,
                           bad_outputs)

    def _holds(self, task: Task, spec: Spec | None, which: str, inputs: Sequence[Input],
               extend: Callable[[list[list[Any]]], list[list[Any]]],
               extra_bad: dict[int, str] | None = None) -> list[Verdict]:
        op = f"{which}condition_holds"
        if python_sections(task) is None and (spec is None or
                                    (spec.precond if which == "pre" else spec.postcond) is None):
            why = "unsupported: no Python specification"
            self._stats.count_unknowns(op, spec, [why] * len(inputs))
            return Verdicts([Verdict.UNKNOWN for _ in inputs], [why] * len(inputs))
        if python_sections(task) is None:
            task = _with_empty_aux(task)
        source, restricted, why = self._spec_module(task, spec, which)
        if why:
            self._stats.count_unknowns(op, spec, [why] * len(inputs))
            return Verdicts([Verdict.UNKNOWN for _ in inputs], [why] * len(inputs))
        natives, bad = self._native_inputs(task, inputs)
        bad.update(extra_bad or {})
        func = "precondition" if which == "pre" else "postcondition"
        # A candidate specification judges each item in a fresh module: it must not
        # learn which items are the answer key from the order it is asked them.
        items = extend(natives)
        waits = self._waits(task, spec.origin, [func], items, bad) if spec is not None else None
        results = self._evaluate(source, [func], items, bad, restricted, fresh=restricted,
                                 waits=waits)
        unknown: list[str] = []
        got = self._bool_verdicts(results, _spec_key(task, which, source) if restricted else None,
                                  unknown, bad)
        self._stats.count_unknowns(op, spec, unknown)
        return got

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        """Syntax + safety check + import in a worker, and the needed functions defined."""
        if python_sections(task) is None:
            task = _with_empty_aux(task)
        checks: list[tuple[str, list[str], bool, str | None]] = []
        if impl is not None or spec is None:
            checks.append(self._impl_module(task, impl))
        if spec is not None:
            for which, fn in (("pre", "precondition"), ("post", "postcondition")):
                if (spec.precond if which == "pre" else spec.postcond) is not None:
                    source, restricted, why = self._spec_module(task, spec, which)
                    checks.append((source, [fn], restricted, why))
        for source, funcs, restricted, why in checks:
            if why:
                return f"compile: {why}"
            if not source.strip():
                return "compile: empty source"
            err = self.sandbox.load_error(source, restricted, funcs)
            if err:
                return err
        return None


def _spec_key(task: Task, which: str, source: str) -> tuple[str, str, str]:
    return task.id, which, hashlib.sha256(source.encode()).hexdigest()


def _with_empty_aux(task: Task) -> Task:
    """A task without Python sections can still run candidate Python code."""

    from veriscale.backends.python.format import LANGUAGE
    from veriscale.backends.python.sections import PythonSections

    return task.with_section(LANGUAGE, PythonSections())
