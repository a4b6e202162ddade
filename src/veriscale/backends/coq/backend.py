"""The Coq backend: every oracle question answered by evaluation in real ``coqc``.

VERINA's Coq specifications are ``bool``-valued, so classification and every
spec check are decided by evaluation. Checks are batched: each task context
(ground truth, or a candidate's code or spec) is one ``Module`` of a shared
file, each check one evaluation (what ``Compute`` runs) after a marker carrying
a per-file nonce, so answers map back to checks whatever the values print. A file stops at its
first error: the failing check (or context) is located by line, recorded, and
the rest of the file is run again, so one failure never hides another. Each
check has its own time limit inside the file (Ltac ``timeout``, see
:func:`~veriscale.backends.coq.files.check_tactic`): a looping check costs its own limit and is UNKNOWN
without stopping the file or hiding another. Exhausted memory kills the
process and blames the check that was running, as UNKNOWN.
``nat`` is unary: a value above ``nat_bound`` is not evaluated at all.

The file model is :mod:`~veriscale.backends.coq.files`, running files
:mod:`~veriscale.backends.coq.running`; this module turns oracle questions into
checks and their answers into outcomes.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from veriscale.backends.base import (
    AnswersHook,
    BackendStats,
    Classification,
    Implementation,
    Label,
    Outcome,
    ProgressHook,
    Spec,
    Verdict,
    Verdicts,
    notify_answers,
)
from veriscale.backends.coq import format as F
from veriscale.backends.coq.files import (
    Check,
    Lits,
    Unit,
    applied,
    big_nat_literal,
    hoist_requires,
)
from veriscale.backends.coq.literal import (
    is_ascii,
    nat_magnitude,
    parse_coq,
    to_coq,
)
from veriscale.backends.coq.runner import (
    coqc_version,
    quickchick_available,
)
from veriscale.backends.coq.running import FileRunning
from veriscale.backends.coq.safety import opaque_names, screen, screen_term
from veriscale.backends.coq.sections import coq_sections
from veriscale.backends.coq.types import standard_type
from veriscale.backends.stops import StopMemory
from veriscale.benchmark.model import Input, Task
from veriscale.execution import Executor
from veriscale.values import is_modelled
from veriscale.values.value import ValueError_

NON_ASCII = ("non-ASCII text (Coq's string is a list of 8-bit ascii, so a character above "
             "127 has no faithful counterpart; not evaluated)")
# The authors sampled 3000 (expected input, adversary) pairs per task. Unsampled,
# VERINA-Coq's default config holds about 562,000 cells (up to 9,776 in one task),
# hours of coqc on 2 cores; at 3000 a task keeps every cell up to that size.
DEFAULT_CELL_BUDGET = 3000


class CoqBackend(FileRunning):
    """Oracle on ``coqc`` (see the module docstring). Options: ``coqc`` (path or
    name), ``timeout`` (seconds per file), ``check_timeout`` (per ``Compute``),
    ``memory_mb`` (per process), ``nat_bound``, ``workers`` (parallel coqc),
    ``max_checks_per_file``, ``timeout_budget`` (checks of one context that may
    exceed their limits before the rest are skipped, see :func:`check_tactic`),
    ``cell_budget`` ((expected input, adversary) cells run per task unless the
    config's ``[adversaries] max_cells`` says otherwise; 0 runs every cell),
    ``share_literals`` (define a literal several checks of a file pass once, see
    :func:`render_file`; off only to measure it), ``executor`` (where files run: with a remote executor each ``coqc`` file is
    one unit of it)."""

    coverage_unavailable = ("Coq runs the reference by reduction (Compute), which reports "
                            "no per-line execution")

    name = "coq"

    def __init__(self, coqc: str = "coqc", timeout: float = 300.0, check_timeout: int = 10,
                 memory_mb: int = 2048, nat_bound: int = 200_000, workers: int = 2,
                 max_checks_per_file: int = 1500, max_units_per_file: int = 60,
                 timeout_budget: int = 3, quickchick: bool = True,
                 cell_budget: int = DEFAULT_CELL_BUDGET, share_literals: bool = True,
                 executor: Executor | None = None, **_ignored: Any) -> None:
        self.executor = executor
        self.share_literals = bool(share_literals)
        self.default_cell_budget = max(0, int(cell_budget))
        self.timeout_budget = max(1, int(timeout_budget))
        self.quickchick = bool(quickchick)
        self.coqc = coqc
        self.timeout = float(timeout)
        self.check_timeout = int(check_timeout)
        self.memory_mb = int(memory_mb)
        self.nat_bound = int(nat_bound)
        self.workers = max(1, int(workers))
        self.max_checks = int(max_checks_per_file)
        self.max_units = int(max_units_per_file)
        self.stats = BackendStats(extra={"coqc_files": 0, "reruns": 0, "skipped": 0})
        self._timed_out: StopMemory[bool] = StopMemory()  # by (context, check head)
        self._lock = threading.Lock()
        self.progress: ProgressHook | None = None  # set by a progress display
        self.on_answers: AnswersHook | None = None  # set by the oracle cache

    answer_revision = 4
    """Raised when the same check can get another answer from this code (2: a string
    of non-UTF-8 bytes is unparsable; 3: non-ASCII text is not evaluated; 4: a
    candidate's exhausted memory spends its unit's budget, and a list literal inside
    ``Some`` or a pair reads in any scope), so the
    oracle cache never serves older ones (:func:`~veriscale.backends.cache.oracle_identity`)."""

    def identity(self) -> str:
        """Who answers, for the oracle cache: ``coqc``'s version."""
        return coqc_version(self.coqc)

    # ---------------------------------------------------------------- contexts

    def _imports(self, task: Task, extra: str = "") -> str:
        s = self._sections(task)
        return "\n".join(x for x in (s.task_imports, s.solution_imports, extra) if x.strip())

    @staticmethod
    def _sections(task: Task) -> Any:
        coq = coq_sections(task)
        if coq is None:
            raise ValueError(f"{task.id}: not a Coq task (no task.v sections)")
        return coq

    def _gt_context(self, task: Task) -> str:
        s = self._sections(task)
        source = s.source or F.render_task_v(task.signature, s)
        m = re.search(r"\(\*\s*!benchmark\s+@start\s+proof_aux\s*\*\)", source)
        return source[: m.start()] if m else source

    def _block(self, task: Task, which: str) -> str:
        """The ground truth's ``which`` definition, header to closing dot."""
        s = self._sections(task)
        source = s.source or F.render_task_v(task.signature, s)
        header = F.definition_header(s, which) or ""
        start = source.find(header) if header else -1
        m = re.search(r"\(\*\s*!benchmark\s+@end\s+" + which + r"\s*\*\)\s*\.", source)
        if start < 0 or m is None:
            raise ValueError(f"{task.id}: task.v has no {which} definition")
        return source[start:m.end()]

    def _spec_text(self, task: Task, fn: str) -> str:
        """The text evaluating ``fn`` (a pre- or postcondition name) may run."""
        s = self._sections(task)
        own = (s.precond_aux, s.precond) if "_precond" in fn else (s.postcond_aux, s.postcond)
        if fn.endswith("_dec"):  # the bool twin lives in the aux section
            own = (own[0],)
        return "\n".join((s.task_aux, s.solution_aux, *own))

    def _binders(self, task: Task) -> str:
        return " ".join(f"({p.name} : {p.type_text})" for p in task.signature.params)

    def _spec_context(self, task: Task, spec: Spec) -> tuple[str, str | None]:
        s = self._sections(task)
        name, binders, ret = task.signature.name, self._binders(task), task.signature.return_text
        parts = [self._imports(task, spec.imports), s.task_aux, s.solution_aux]
        for text, where in ((spec.imports, "imports"), (spec.precond_aux, "precond_aux"),
                            (spec.postcond_aux, "postcond_aux")):
            why = screen(text, where=where) if text.strip() else None
            if why:
                return "", why
        for body, where in ((spec.precond, "precond"), (spec.postcond, "postcond")):
            why = screen_term(body, where=where) if body is not None else None
            if why:
                return "", why
        if spec.precond is None:
            parts += [s.precond_aux, self._block(task, "precond")]
        else:
            parts += [spec.precond_aux,
                      f"Definition {name}_precond {binders} : bool :=\n{spec.precond}\n."]
        if spec.postcond is None:
            parts += [s.postcond_aux, self._block(task, "postcond")]
        else:
            parts += [spec.postcond_aux, f"Definition {name}_postcond {binders} "
                                         f"(result : {ret}) : bool :=\n{spec.postcond}\n."]
        return "\n".join(p for p in parts if p.strip()), None

    def _code_context(self, task: Task, impl: Implementation) -> tuple[str, str | None]:
        why = screen(impl.code, where="code")
        if why:
            return "", why
        s = self._sections(task)
        parts = [self._imports(task), s.task_aux, s.solution_aux, s.precond_aux,
                 self._block(task, "precond"), impl.code]
        return "\n".join(p for p in parts if p.strip()), None

    def _unit(self, context: str, checks: list[Check], trusted: bool, aliases: str) -> Unit:
        requires, body = hoist_requires(context)
        return Unit(body + "\n" + aliases, checks, trusted, requires)

    # ---------------------------------------------------------------- rendering checks

    def _args(self, task: Task, inp: Input) -> tuple[Lits | None, str]:
        """Rendered arguments, or ``(None, reason)``: ill-typed or above the nat bound."""
        sig = task.signature
        if len(inp) != len(sig.params):
            return None, f"ill_typed: {len(inp)} values for {len(sig.params)} parameters"
        parts: list[tuple[str, str | None]] = []
        for p, v in zip(sig.params, inp, strict=True):
            try:
                parts.append((to_coq(p.type, v, in_check=True), standard_type(p.type)))
            except (ValueError_, ValueError) as exc:
                return None, f"ill_typed: {p.name}: {exc}"
            big = nat_magnitude(p.type, v)
            if big > self.nat_bound:
                return None, (f"unsupported: nat value {big} in {p.name} is above the bound "
                              f"{self.nat_bound} (nat is unary in Coq; not evaluated)")
            if not is_ascii(p.type, v):
                return None, f"unsupported: {NON_ASCII} in {p.name}"
        return tuple(parts), ""

    def _output(self, task: Task, value: Any) -> tuple[str | None, str]:
        t = task.signature.return_type
        try:
            text = to_coq(t, value, in_check=True)
        except (ValueError_, ValueError) as exc:
            return None, f"ill_typed: result: {exc}"
        big = nat_magnitude(t, value)
        if big > self.nat_bound:
            return None, (f"unsupported: nat value {big} in the output is above the bound "
                          f"{self.nat_bound} (not evaluated)")
        if not is_ascii(t, value):
            return None, f"unsupported: {NON_ASCII} in the output"
        return text, ""

    def _precond_name(self, task: Task, spec: Spec | None) -> tuple[str | None, str]:
        s = self._sections(task)
        name = task.signature.name
        if spec is not None and spec.precond is not None:
            return f"{name}_precond", "compute"
        if F.returns_bool(s, "precond"):
            return f"{name}_precond", "compute"
        if re.search(rf"\b{name}_precond_dec\b", s.precond_aux):
            return f"{name}_precond_dec", "compute(dec)"
        if self.quickchick and quickchick_available(self.coqc):
            return f"{name}_precond", "quickchick"
        return None, ("unsupported: Prop-valued precondition with no bool _dec twin "
                      "(and no QuickChick to decide it)")

    def _postcond_name(self, task: Task, spec: Spec | None) -> tuple[str | None, str]:
        s = self._sections(task)
        name = task.signature.name
        if spec is not None and spec.postcond is not None:
            return f"{name}_postcond", ""
        if F.returns_bool(s, "postcond"):
            return f"{name}_postcond", ""
        if re.search(rf"\b{name}_postcond_dec\b", s.postcond_aux):
            return f"{name}_postcond_dec", ""
        return None, "unsupported: Prop-valued postcondition with no bool _dec twin"

    # ---------------------------------------------------------------- jobs

    def _bool_job(self, task: Task, spec: Spec | None, calls: list[tuple[Lits | None, str]],
                  fn: str | None, why_fn: str, results: list[Any], stage: str = ""
                  ) -> Unit | None:
        """``results[i]`` becomes a (Verdict, detail) once the unit has run."""
        if spec is None or (spec.precond is None and spec.postcond is None):
            context, why, trusted = self._gt_context(task), None, True
            big = big_nat_literal(self._spec_text(task, fn or ""), self.nat_bound)
            if big is not None:
                why_fn, fn = (f"unsupported: the specification holds the nat literal {big}, "
                              f"above the bound {self.nat_bound} (not evaluated)"), None
        else:
            (context, why), trusted = self._spec_context(task, spec), False
        checks: list[Check] = []
        slots: list[int] = []
        for i, (args, reason) in enumerate(calls):
            if fn is None:
                results[i] = (Verdict.UNKNOWN, why_fn)
            elif why:
                results[i] = (Verdict.ERROR, f"compile: screen: {why}")
            elif args is None:
                results[i] = (Verdict.UNKNOWN, reason)
            else:
                checks.append(applied("vsq_fn", args))
                slots.append(i)
        if not checks:
            return None
        aliases = f"Definition vsq_fn := {fn}."
        if stage == "quickchick":
            # QuickChick's Dec instances decide a closed Prop: `(P args ?)` is a bool.
            context = "From QuickChick Require Import QuickChick.\n" + context
            checks = [Check(f"({c.expr} ?)") for c in checks]
        unit = self._unit(context, checks, trusted, aliases)
        unit.slots = slots  # type: ignore[attr-defined]
        unit.results = results  # type: ignore[attr-defined]
        unit.kind = "bool"  # type: ignore[attr-defined]
        return unit

    def _run_job(self, task: Task, impl: Implementation | None, inputs: Sequence[Input],
                 results: list[Any]) -> Unit | None:
        s = self._sections(task)
        fail: str | None = None
        if impl is None:
            context, trusted = self._gt_context(task), True
            if F.takes_proof_argument(s):
                fail = "unsupported: the reference takes a proof of its Prop precondition"
        else:
            (context, why), trusted = self._code_context(task, impl), False
            if why:
                fail = f"compile: screen: {why}"
        if not is_modelled(task.signature.return_type):
            fail = fail or (f"unsupported: results of type {task.signature.return_text} do not "
                            "reduce to literals under Compute")
        checks, slots = [], []
        for i, inp in enumerate(inputs):
            args, reason = self._args(task, inp)
            if fail:
                results[i] = Outcome(False, error=fail)
            elif args is None:
                results[i] = Outcome(False, error=reason)
            else:
                checks.append(applied("vsq_fn", args))
                slots.append(i)
        if not checks:
            return None
        unit = self._unit(context, checks, trusted, f"Definition vsq_fn := {task.signature.name}.")
        unit.slots, unit.results, unit.kind = slots, results, "run"  # type: ignore[attr-defined]
        unit.task = task  # type: ignore[attr-defined]
        return unit

    def _finish(self, unit: Unit) -> None:
        kind = unit.kind  # type: ignore[attr-defined]
        if kind == "compile":
            return
        for slot, check in zip(unit.slots, unit.checks, strict=True):  # type: ignore[attr-defined]
            unit.results[slot] = self._answer(unit, kind, check)  # type: ignore[attr-defined]

    def _answer(self, unit: Unit, kind: str, check: Check) -> Any:
        if check.error is not None:
            ekind, message = check.error
            message = " ".join(message.split())[:300]
            if ekind in ("timeout", "memory", "infrastructure"):
                text = f"{ekind}: {message}"
            elif unit.trusted:
                text = f"infrastructure: coqc rejected the ground truth check: {message}"
            else:
                text = f"compile: {message}"
            if kind == "bool":
                # a candidate spec that does not build is a wrong answer, not an abstention
                wrong = not unit.trusted and ekind not in ("timeout", "memory", "infrastructure")
                return (Verdict.ERROR if wrong else Verdict.UNKNOWN, text)
            return Outcome(False, error=text)
        answer = check.answer or ""
        if kind == "bool":
            if answer in ("true", "false"):
                return (Verdict.of(answer == "true"), "")
            if not unit.trusted:
                own = sorted(n for n in opaque_names(unit.context)
                             if re.search(rf"(?<![\w']){re.escape(n)}(?![\w'])", answer))
                if own:  # stuck on its own Qed: the candidate chose not to reduce
                    return (Verdict.ERROR, f"error: the specification did not reduce: it "
                            f"is stuck on {own[0]}, which it closed with Qed (opaque)")
            return (Verdict.UNKNOWN, "unsupported: the specification did not reduce to "
                    f"true/false under Compute: {answer[:120]}")
        task = unit.task  # type: ignore[attr-defined]
        try:
            return Outcome(True, parse_coq(task.signature.return_type, answer))
        except (ValueError_, ValueError) as exc:
            return Outcome(False, error=f"unsupported: cannot read the result {answer[:120]!r}: "
                                        f"{exc}")

    def _drive(self, units: list[Unit | None],
               on_file: Callable[[list[Unit]], None] | None = None) -> None:
        """Run ``units`` and read each one's results as its file is done; ``on_file``
        is then told that file's units."""
        def finished(done: list[Unit]) -> None:
            for u in done:
                self._finish(u)
            if on_file is not None:
                on_file(done)

        self.execute([u for u in units if u is not None], finished)

    # ---------------------------------------------------------------- protocol

    def check_inputs(self, task: Task, inputs: Sequence[Input]) -> list[str | None]:
        out: list[str | None] = []
        for inp in inputs:
            args, reason = self._args(task, inp)
            out.append(None if args is not None or reason.startswith("unsupported") else reason)
        return out

    def _classify_units(self, task: Task, inputs: Sequence[Input]) -> tuple[Unit | None, list]:
        fn, why = self._precond_name(task, None)
        results: list[Any] = [None] * len(inputs)
        calls = [self._args(task, i) for i in inputs]
        stage = why if fn is not None else ""
        unit = self._bool_job(task, None, calls, fn, why, results, stage)
        return unit, results

    @staticmethod
    def _labels(results: list[Any], stage: str = "compute") -> list[Classification]:
        out = []
        for verdict, detail in results:
            label = {Verdict.TRUE: Label.EXPECTED, Verdict.FALSE: Label.UNEXPECTED}.get(
                verdict, Label.UNKNOWN)
            out.append(Classification(label, stage, detail))
        return out

    def classify(self, task: Task, inputs: Sequence[Input]) -> list[Classification]:
        return self.classify_many([(task, inputs)])[0]

    def classify_many(self, jobs: Sequence[tuple[Task, Sequence[Input]]]
                      ) -> list[list[Classification]]:
        made = [self._classify_units(t, inputs) for t, inputs in jobs]
        self._drive([u for u, _ in made])
        return [self._labels(r, self._stage(t)) for (t, _), (_, r) in zip(jobs, made, strict=True)]

    def _stage(self, task: Task) -> str:
        fn, stage = self._precond_name(task, None)
        return stage if fn is not None else "compute"

    def _pre_job(self, task: Task, spec: Spec | None, inputs: Sequence[Input]
                 ) -> tuple[Unit | None, list]:
        fn, why = self._precond_name(task, spec)
        results: list[Any] = [None] * len(inputs)
        return self._bool_job(task, spec, [self._args(task, i) for i in inputs], fn, why,
                              results), results

    def precondition_holds(self, task: Task, spec: Spec | None, inputs: Sequence[Input]
                           ) -> list[Verdict]:
        return self.precondition_holds_many([(task, spec, inputs)])[0]

    def precondition_holds_many(self, jobs: Sequence[tuple[Task, Spec | None, Sequence[Input]]]
                                ) -> list[list[Verdict]]:
        made = [self._pre_job(*j) for j in jobs]
        self._drive([u for u, _ in made])
        self._count_unknowns([("precondition_holds", j, r) for j, (_, r) in zip(jobs, made, strict=True)])
        return [Verdicts([v for v, _ in r], [why for _, why in r]) for _, r in made]

    def _post_job(self, task: Task, spec: Spec | None, pairs: Sequence[tuple[Input, Any]]
                  ) -> tuple[Unit | None, list]:
        fn, why = self._postcond_name(task, spec)
        results: list[Any] = [None] * len(pairs)
        calls: list[tuple[Lits | None, str]] = []
        result_type = standard_type(task.signature.return_type)
        for inp, out in pairs:
            args, reason = self._args(task, inp)
            if args is None:
                calls.append((None, reason))
                continue
            res, reason = self._output(task, out)
            calls.append(((*args, (res, result_type)) if res is not None else None, reason))
        return self._bool_job(task, spec, calls, fn, why, results), results

    def postcondition_holds(self, task: Task, spec: Spec | None,
                            pairs: Sequence[tuple[Input, Any]]) -> list[Verdict]:
        return self.postcondition_holds_many([(task, spec, pairs)])[0]

    def postcondition_holds_many(self, jobs: Sequence[tuple[Task, Spec | None,
                                                          Sequence[tuple[Input, Any]]]]
                                 ) -> list[list[Verdict]]:
        made = [self._post_job(*j) for j in jobs]
        self._drive([u for u, _ in made])
        self._count_unknowns([("postcondition_holds", j, r) for j, (_, r) in zip(jobs, made, strict=True)])
        return [Verdicts([v for v, _ in r], [why for _, why in r]) for _, r in made]

    def run(self, task: Task, impl: Implementation | None, inputs: Sequence[Input]
            ) -> list[Outcome]:
        return self.run_many([(task, impl, inputs)])[0]

    def run_many(self, jobs: Sequence[tuple[Task, Implementation | None, Sequence[Input]]]
                 ) -> list[list[Outcome]]:
        made = []
        for task, impl, inputs in jobs:
            results: list[Any] = [None] * len(inputs)
            made.append((self._run_job(task, impl, inputs, results), results))
        self._drive([u for u, _ in made])
        return [r for _, r in made]

    def evaluate_many(self, requests: Sequence[tuple[str, tuple[Any, ...]]]) -> list[Any]:
        """Mixed requests ``(op, job)`` answered from as few ``coqc`` files as possible."""
        made: list[tuple[str, Unit | None, list]] = []
        jobs_of = [job for _, job in requests]
        for op, job in requests:
            if op == "classify":
                u, r = self._classify_units(*job)
            elif op == "precondition_holds":
                u, r = self._pre_job(*job)
            elif op == "postcondition_holds":
                u, r = self._post_job(*job)
            elif op == "run":
                task, impl, inputs = job
                r = [None] * len(inputs)
                u = self._run_job(task, impl, inputs, r)
            elif op == "check_inputs":
                u, r = None, self.check_inputs(*job)
            elif op == "compile":
                u, r = self._compile_unit(*job)
            else:
                raise ValueError(f"unknown operation {op!r}")
            made.append((op, u, r))
        on_file = None
        if self.on_answers is not None:
            hook = self.on_answers
            request_of = {id(u): ri for ri, (_, u, _) in enumerate(made) if u is not None}

            def on_file(units: list[Unit]) -> None:
                told = []
                for u in units:  # each request has one unit: all of it is answered
                    ri = request_of[id(u)]
                    op, _, r = made[ri]
                    told += [(jobs_of[ri], i, a) for i, a in
                             enumerate(self._protocol_answers(op, jobs_of[ri], u, r))]
                notify_answers(hook, told)

        self._drive([u for _, u, _ in made], on_file)
        self._count_unknowns([(op, job, r) for (op, _, r), job in zip(made, jobs_of, strict=True)
                              if op in ("precondition_holds", "postcondition_holds")])
        return [self._protocol_answers(op, job, u, r)
                for (op, u, r), job in zip(made, jobs_of, strict=True)]

    def _count_unknowns(self, done: list[tuple[str, tuple[Any, ...], list[Any]]]) -> None:
        """Count why verdicts stayed UNKNOWN (:meth:`BackendStats.count_unknowns`)."""
        with self._lock:
            for op, job, r in done:
                self.stats.count_unknowns(op, job[1], [why for v, why in r
                                                       if v is Verdict.UNKNOWN])

    def _protocol_answers(self, op: str, job: tuple[Any, ...], u: Unit | None,
                          r: list[Any]) -> list[Any]:
        """What the protocol returns for a request, from its unit's results."""
        if op == "classify":
            return self._labels(r, self._stage(job[0]))
        if op == "compile":
            return [self._compile_answer(u, r)]
        if op in ("run", "check_inputs"):
            return r
        return Verdicts([v for v, _ in r], [why for _, why in r])

    def _compile_unit(self, task: Task, impl: Implementation | None = None,
                      spec: Spec | None = None) -> tuple[Unit | None, str | None]:
        """A unit whose one check is ``tt`` (it only has to build), or the screen's reason."""
        if impl is not None:
            context, why = self._code_context(task, impl)
        elif spec is not None:
            context, why = self._spec_context(task, spec)
        else:
            context, why = self._gt_context(task), None
        if why:
            return None, f"compile: screen: {why}"
        unit = self._unit(context, [Check("tt")], impl is None and spec is None, "")
        unit.slots, unit.results, unit.kind = [], [], "compile"  # type: ignore[attr-defined]
        return unit, None

    @staticmethod
    def _compile_answer(unit: Unit | None, why: str | None) -> str | None:
        if unit is None:
            return why
        check = unit.checks[0]
        if check.error is not None:
            kind = check.error[0]
            kind = "compile" if kind in ("context", "error") else kind
            return f"{kind}: {' '.join(check.error[1].split())[:500]}"
        return None

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        return self.compile_many([(task, impl, spec)])[0]

    def compile_many(self, jobs: Sequence[tuple[Any, ...]]) -> list[str | None]:
        made = [self._compile_unit(*job) for job in jobs]
        self.execute([u for u, _ in made if u is not None])
        return [self._compile_answer(u, why) for u, why in made]

    def close(self) -> None:
        return None
