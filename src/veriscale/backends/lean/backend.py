"""The Lean backend: every oracle question answered by batched Lean files.

Each operation turns its items into Lean commands (one per item), packs the
commands of one or *several* tasks into few files (``render.layout_file``), runs
each file once (``runner``), and maps each message back to its item by line.
The authors ran one Lean process per check (up to ten per candidate input);
here one process answers up to ``chunk_size`` checks of up to
``tasks_per_file`` tasks.

Two evaluation modes:

* ``kernel`` (a runner without compiled evaluation; compiled mode's fallback for
  checks that take Lean down): ``#reduce decide (P)``
  prints ``true``/``false``; ``#reduce`` of a call prints a normal form, with
  Strings/Chars projected to code points (``render.projection``).
* ``compiled`` (default on native and on WASM with its compiled-evaluation
  prelude): ``#eval! decide (P)`` and ``#eval! call``
  with ``format.width`` so large that no value is ever wrapped or truncated.

Classification stage 1 asks ``decide (P)`` once per input: it prints the
boolean, so upstream's second process for ``decide (¬P)`` (needed there only
because ``#guard`` cannot tell "false" from "error") would add nothing. Stage 2
(Plausible on ``P`` and ``¬P``) runs only where Plausible is importable (a native
Lake project); elsewhere undecided inputs stay UNKNOWN and the detail says so.

Unknown is never promoted: a check with no clean ``true``/``false`` (stuck
reduction, no ``Decidable`` instance, heartbeats, timeout, crash) is UNKNOWN
with the reason. Batch API, for packing many tasks into one file (what makes
WASM usable: each Lean start costs the import of ``Init``)::

    backend.classify_many([(task, inputs), ...])
    backend.run_many([(task, impl_or_None, inputs), ...])
    backend.precondition_holds_many([(task, spec_or_None, inputs), ...])
    backend.postcondition_holds_many([(task, spec_or_None, pairs), ...])
    backend.check_inputs_many([(task, inputs), ...])
    backend.compile_many([(task, impl_or_None, spec_or_None), ...])
    backend.evaluate_many([("classify", (task, inputs)), ("run", (task, None, inputs)), ...])

``evaluate_many`` mixes operations: checks of the same task (and the same
candidate) share one namespace and one elaboration of its definitions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from veriscale.backends.base import (
    AnswersHook,
    BackendStats,
    Classification,
    FailureKind,
    Implementation,
    Label,
    Outcome,
    ProgressHook,
    Spec,
    Verdict,
    Verdicts,
    notify_answers,
    notify_progress,
)
from veriscale.backends.lean import batching, render
from veriscale.backends.lean.files import default_workers, file_limits
from veriscale.backends.lean.kernel_route import KernelRoute
from veriscale.backends.lean.messages import (
    CheckOutput,
    bool_answer,
    check_answer,
    classify_answer,
    classify_decision_answer,
    compile_answer,
    equality_outcome,
    plausible_answer,
    plausible_verdict,
    protocol_answer,
    value_outcome,
    verina_plausible_answer,
)
from veriscale.backends.lean.plans import Plan, Slot, cmd_slot, done_slot
from veriscale.backends.lean.runner import LeanRunner, make_runner
from veriscale.backends.lean.running import FileRunning
from veriscale.backends.lean.safety import check_imports, check_untrusted_lean
from veriscale.backends.lean.sections import lean_sections
from veriscale.backends.stops import StopMemory, StopStore
from veriscale.benchmark.model import Input, Task
from veriscale.execution import Executor, LocalExecutor


class LeanBackend(FileRunning, KernelRoute):
    """The Backend protocol over Lean (native or WASM), batched; see the module doc.
    Here: the protocol and each operation's plan; how the plans' checks run in files
    is :class:`~veriscale.backends.lean.running.FileRunning`, the kernel routes
    :class:`~veriscale.backends.lean.kernel_route.KernelRoute`."""

    name = "lean"
    answer_revision = 1
    """Raised when this backend answers some check differently (a result cache then
    serves none of the old answers). 1: a pre/postcondition that panicked in compiled
    code is asked of the kernel, and never the specification's ERROR."""
    classify_checks_syntax = True  # classify's answers include the syntax filter's
    coverage_unavailable = ("Lean runs the reference by compiled evaluation (#eval) or "
                            "kernel reduction, and neither reports which lines ran")

    def __init__(
        self,
        runner: str | LeanRunner = "auto",
        *,
        lean_path: str | None = None,
        project_dir: str | Path | None = None,
        timeout: float | None = None,
        workers: int | None = None,
        mode: str = "auto",
        cache_dir: str | Path | None = None,
        chunk_size: int | None = None,
        tasks_per_file: int | None = None,
        max_heartbeats: int = 400000,
        probe_heartbeats: int | None = None,
        heartbeat_retries: int = 2,
        heartbeat_step: int = 8,
        memory_mb: int | None = None,
        work_dir: str | Path | None = None,
        plausible: bool | None = None,
        keep_files: bool = False,
        crash_retries: int = 2,
        executor: Executor | None = None,
        batch_size: int | None = None,
        check_seconds: float | None = 60.0,
        timeout_retries: int = 6,
        kernel_fallback: bool = True,
        helpers: bool = True,
        data: bool = True,
        sessions: bool | None = None,
        **other: Any,
    ) -> None:
        if isinstance(runner, LeanRunner):
            self.runner = runner
        else:
            self.runner = make_runner(
                runner, lean_path=lean_path,
                project_dir=Path(project_dir) if project_dir else None,
                timeout=timeout, memory_mb=memory_mb,
                cache_dir=Path(cache_dir) if cache_dir else None,
                work_dir=Path(work_dir) if work_dir else None, plausible=plausible,
            )
        if sessions is not None:  # None: the runner's default (WASM: on)
            self.runner.sessions = bool(sessions)
        if mode not in ("auto", "kernel", "compiled"):
            raise ValueError(f"unknown Lean mode {mode!r}; choose auto, kernel or compiled")
        if mode == "auto":  # compiled wherever the runner can (WASM: with its prelude)
            mode = "compiled" if self.runner.supports_compiled else "kernel"
        if mode == "compiled" and not self.runner.supports_compiled:
            raise ValueError(f"the {self.runner.name} Lean runner supports kernel mode only")
        self.mode = mode
        # compiled mode: checks asked together in one #eval! of a list (batching.BATCH_SIZE)
        self.batch_size = 1 if mode == "kernel" else max(1, int(batch_size or batching.BATCH_SIZE))
        if mode == "compiled" and check_seconds:
            # Heartbeats do not bound compiled evaluation (an exponential specification
            # ran for minutes): a file whose Lean uses this many CPU seconds without a
            # message is stopped, and the check it was on is a timeout (UNKNOWN) while
            # the rest go on in a new file.
            self.runner.stall_seconds = float(check_seconds)
        limits = file_limits(self.runner.name, self.runner.sessions)
        self.chunk_size = int(chunk_size or limits.checks)
        self.tasks_per_file = int(tasks_per_file or limits.units)
        self.file_limits = limits
        self.workers = max(1, int(workers or default_workers(limits.peak_mb)))
        self.runner.session_size = self.workers
        self.default_cell_budget = limits.cell_budget
        self.max_heartbeats = int(max_heartbeats)
        # Checks first run under a small heartbeat budget; the few of a unit that
        # exceed it scout larger ones (see _execute). 0: one round at the full budget.
        # 2000 of 400000 (measured on WASM): a 60-element list literal's #check needs
        # more than 250; ordinary checks of 20 VERINA tasks fit 2000; a stuck one
        # costs about 0.4 ms per heartbeat.
        # Compiled mode: no probe by default. Heartbeats bound elaboration there, not
        # the evaluation, so no check gets stuck spending them; a probe would only add
        # the ladder's rounds (a Lean start each: about 30 s on WASM with the prelude).
        if probe_heartbeats is None:
            probe_heartbeats = self.max_heartbeats // 200 if mode == "kernel" else 0
        self.probe_heartbeats = int(probe_heartbeats)
        self.heartbeat_retries = max(0, int(heartbeat_retries))
        self.heartbeat_step = max(2, int(heartbeat_step))
        self.keep_files = keep_files
        self.crash_retries = int(crash_retries)
        self.timeout_retries = int(timeout_retries)
        self.kernel_fallback = bool(kernel_fallback)  # compiled mode: crashes go to the kernel
        # compiled mode: a batch through one helper definition (batching.helper_batch);
        # the (unit, kind of check) whose helper did not elaborate go term by term
        self.helpers = bool(helpers)
        self._no_helper: set[tuple[Any, ...]] = set()
        # compiled mode with Lean's JSON at hand: a helper batch's values go as one
        # string decoded when it runs (backends/lean/data.py), not as literals to
        # elaborate and compile; (unit, kind of check) where that failed keep literals
        self.data = bool(data) and self.helpers and mode == "compiled" \
            and "Lean" in self.runner.compiled_imports
        self._no_data: set[tuple[Any, ...]] = set()
        # (unit, kind of check) → the smallest size that stopped Lean, whether by a
        # timeout, and why: larger checks of that function are not asked again
        self._stopped: StopMemory[tuple[bool, str]] = StopMemory()  # (timed out, failure)
        # (task, kind of check) → crashes of compiled Lean (running.TASK_CRASHES)
        self._crashes: dict[tuple[str, str], int] = {}
        # Where each Lean file runs: here (default) or as one unit of a remote executor.
        self.executor: Executor = executor or LocalExecutor()
        self.stats = BackendStats()
        self.stats.extra.update(runner=self.runner.name, mode=self.mode, files=0, timeouts=0,
                                crashes=0)
        ignored = sorted(k for k, v in other.items() if v is not None)
        if ignored:
            self.stats.extra["ignored_options"] = ignored
        self._counter = 0
        self._lock = threading.Lock()
        self._running = 0  # Lean files running now, and since when at that count
        self._running_since = time.monotonic()
        self.compat: dict[str, set[str]] = {}  # task id → compatibility names it needed
        self._kernel_backend: LeanBackend | None = None  # the kernel fallback's (see _kernel)
        self._stop_store: tuple[StopStore, str] | None = None  # see keep_stops
        self.progress: ProgressHook | None = None  # set by a progress display
        self.on_answers: AnswersHook | None = None  # set by the oracle cache

    def _notify(self, event: str, files: int, checks: int) -> None:
        notify_progress(self.progress, event, files, checks)

    @property
    def kernel(self) -> bool:
        return self.mode == "kernel"

    def keep_stops(self, store: StopStore, namespace: str) -> None:
        """Keep the stop memory (this backend's and its kernel fallback's) in ``store``
        (see :data:`~veriscale.backends.base.StopsHook`); the namespace adds what makes a
        stop: the mode and the limits."""
        self._stop_store = (store, namespace)
        self._stopped.keep_in(store, f"{namespace}|{self.mode}|check seconds "
                                     f"{self.runner.stall_seconds}|heartbeats "
                                     f"{self.max_heartbeats}|memory {self.runner.memory_mb}")
        if self._kernel_backend is not None:
            self._kernel_backend.keep_stops(store, namespace)

    def close(self) -> None:
        """End the runner's Lean sessions (the processes that served this backend's files),
        and the kernel fallback's."""
        self.runner.close_sessions()
        if self._kernel_backend is not None:
            self._kernel_backend.close()

    def __enter__(self) -> LeanBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ execution

    def _allow_import(self, module: str) -> bool:
        return self.runner.accepts_mathlib or render.is_core_import(module)

    # ------------------------------------------------------------ plan builders

    def _plan_items(
        self, variant: render.Variant | None, items: Sequence[Any],
        command: Callable[[Any], str], finish: Callable[[CheckOutput], Any],
        on_bad: Callable[[str], Any],
    ) -> Plan:
        commands: list[str] = []
        slots: list[Slot] = []
        for item in items:
            try:
                text = command(item)
            except Exception as exc:  # an ill-typed value: that item fails, not the call
                slots.append(done_slot(on_bad(f"ill_typed: {exc}")))
                continue
            slots.append(cmd_slot(len(commands)))
            commands.append(text)
        return Plan(variant, commands, slots, finish)

    def _lean_task(self, task: Task) -> str | None:
        """``unsupported: ...`` when the task cannot be checked in Lean at all."""
        if lean_sections(task) is None:
            return f"unsupported: {task.id}: task has no Lean sections"
        return None

    def _spec_problem(self, spec: Spec | None, task: Task | None = None) -> str | None:
        """``compile: ...`` (the screen rejects it) or ``unsupported: ...`` (its imports
        are missing here), else ``None``."""
        if spec is None:
            return None
        for name, body in (("precondition", spec.precond), ("postcondition", spec.postcond)):
            if body is not None and not body.strip():  # VERINA renders `:=` with nothing
                return f"compile: empty {name} (an empty body does not compile in VERINA)"
        for name, text, kind in (("precond", spec.precond, "term"),
                                 ("postcond", spec.postcond, "term"),
                                 ("precond_aux", spec.precond_aux, "commands"),
                                 ("postcond_aux", spec.postcond_aux, "commands")):
            if text:
                why = check_untrusted_lean(text, kind)
                if why:
                    return f"compile: spec {name}: {why}"
        why = _imports_problem(spec.imports, task)
        if why:
            return f"compile: spec imports: {why}"
        bad = [m for m in render.import_lines(spec.imports) if not self._allow_import(m)]
        if bad:
            return f"unsupported: spec imports unavailable here: {', '.join(bad)}"
        return None

    def _plan_check_inputs(self, task: Task, inputs: Sequence[Input]) -> Plan:
        bad = self._lean_task(task)
        if bad:
            return Plan(None, [], [done_slot(bad) for _ in inputs], check_answer)
        return self._plan_items(
            render.Variant(task), inputs,
            lambda inp: render.check_command(render.precond_term(task, inp)),
            check_answer, lambda why: why)

    def _plan_decide(self, task: Task, spec: Spec | None, inputs: Sequence[Input]) -> Plan:
        problem = self._lean_task(task) or self._spec_problem(spec, task)
        variant = None if problem else render.Variant(task, spec=spec)
        plan = self._plan_items(
            variant, inputs,
            lambda inp: render.decide_command(render.precond_term(task, inp), self.kernel),
            bool_answer, lambda why: (None, why))
        if problem:
            plan.slots = [done_slot((None, problem)) for _ in inputs]
            plan.commands = []
        return plan

    def _plan_classify(self, task: Task, inputs: Sequence[Input]) -> Plan:
        """Syntax filter and ``decide`` in one file: two commands per input.

        The ``#check`` tells an ill-typed input (its error sits on the check's
        own lines) from an undecidable one, so classification costs one Lean
        round instead of two.
        """
        problem = self._lean_task(task)
        if problem:
            return Plan(None, [], [done_slot((None, problem)) for _ in inputs], bool_answer)
        commands: list[str] = []
        slots: list[Slot] = []
        # Compiled mode with batch helpers: the decision alone, whose term's elaboration
        # error says the input is ill-typed (classify_decision_answer); the syntax
        # filter's #check was half the checks of a classification and, over all 189
        # VERINA tasks (103,269 candidates), rejected none.
        folded = not self.kernel and self.helpers and self.batch_size > 1
        for inp in inputs:
            try:
                term = render.precond_term(task, inp)
            except Exception as exc:  # an ill-typed value: that input fails, not the call
                slots.append(done_slot((None, f"ill_typed: {exc}")))
                continue
            if folded:
                slots.append(("cmd", len(commands)))
                commands.append(render.decide_command(term, self.kernel))
                continue
            slots.append(("cmds", (len(commands), len(commands) + 1)))
            commands += [render.check_command(term), render.decide_command(term, self.kernel)]
        return Plan(render.Variant(task), commands, slots,
                     classify_decision_answer if folded else bool_answer, classify_answer)

    def _plan_post(
        self, task: Task, spec: Spec | None, pairs: Sequence[tuple[Input, Any]]
    ) -> Plan:
        problem = self._lean_task(task) or self._spec_problem(spec, task)
        variant = None if problem else render.Variant(task, spec=spec)
        plan = self._plan_items(
            variant, pairs,
            lambda pair: render.decide_command(render.postcond_term(task, pair[0], pair[1], self.kernel),
                                               self.kernel),
            bool_answer, lambda why: (None, why))
        if problem:
            plan.slots = [done_slot((None, problem)) for _ in pairs]
            plan.commands = []
        return plan

    def _plan_run(self, task: Task, impl: Implementation | None, inputs: Sequence[Input]) -> Plan:
        problem = self._lean_task(task) or _impl_problem(impl, task)
        ret = task.signature.return_type
        if problem:
            return Plan(None, [], [done_slot(Outcome(False, error=problem)) for _ in inputs],
                         lambda o: None)
        variant = render.Variant(task, impl=impl)
        with_proof = variant.code_needs_proof()
        kernel = self.kernel

        def finish(out: CheckOutput) -> Outcome:
            got = value_outcome(out, ret, kernel)
            if impl is None and got.kind is FailureKind.COMPILE:
                # The ground truth builds where it was written: here, this Lean cannot
                # run it (another version, a missing library), which says nothing of it.
                return Outcome(False, error="unsupported: the reference does not build here: "
                               + got.error.split(":", 1)[1].strip())
            return got

        return self._plan_items(
            variant, inputs,
            lambda inp: render.value_command(render.call_term(task, inp, with_proof, kernel), ret,
                                               kernel),
            finish, lambda why: Outcome(False, error=why))

    def _plan_test(self, task: Task, impl: Implementation | None,
                   pairs: Sequence[tuple[Input, Any]]) -> Plan:
        """Code tests compared in Lean, as VERINA's ``#guard F args == expected``."""
        problem = self._lean_task(task) or _impl_problem(impl, task)
        if problem:
            return Plan(None, [], [done_slot(Outcome(False, error=problem)) for _ in pairs],
                         lambda o: None)
        variant = render.Variant(task, impl=impl)
        with_proof = variant.code_needs_proof()
        ret = task.signature.return_type
        kernel = self.kernel

        def command(pair: tuple[Input, Any]) -> str:
            call = render.call_term(task, pair[0], with_proof, kernel)
            return render.equality_command(call, render.value_text(ret, pair[1]), kernel)

        return self._plan_items(variant, pairs, command, equality_outcome,
                                lambda why: Outcome(False, error=why))

    def _plan_plausible(self, task: Task, inputs: Sequence[Input]) -> Plan:
        """Two examples per input, ``P`` and ``¬P``, as upstream's stage 2."""
        name = f"{task.signature.name}_precond"
        cmds: list[str] = []
        for inp in inputs:
            term = render.precond_term(task, inp)
            cmds.append(render.plausible_command(f"({term})", name, postcond=False))
            cmds.append(render.plausible_command(f"¬ ({term})", name, postcond=False))
        return Plan(render.Variant(task), cmds, [cmd_slot(i) for i in range(len(cmds))],
                     plausible_answer)

    # ------------------------------------------------------------ batch operations

    def evaluate_many(self, requests: Sequence[tuple[str, tuple[Any, ...]]]) -> list[list[Any]]:
        """Answer requests of mixed kinds in as few Lean files as possible.

        ``requests`` are ``(operation, args)`` with the protocol's arguments, e.g.
        ``("classify", (task, inputs))``; the answers are what the protocol
        method would return, one list per request.
        """
        builders = self._builders()
        plans = []
        for op, args in requests:
            if op not in builders:
                raise ValueError(f"unknown operation {op!r}; choose {', '.join(builders)}")
            plans.append(builders[op](*args))
        early = None
        if self.on_answers is not None:
            hook = self.on_answers

            def early(told: list[tuple[int, int, Any]]) -> None:
                notify_answers(hook, [(requests[ri][1], i, protocol_answer(requests[ri][0], a))
                                      for ri, i, a in told])

        answers = self._run_plans(plans, early)
        if not self.kernel and self.kernel_fallback:
            self._ask_the_kernel(requests, answers, early)
        out: list[list[Any]] = []
        undecided: list[tuple[int, Task, list[int]]] = []
        open_specs: list[tuple[int, list[int]]] = []
        for ri, ((op, args), ans) in enumerate(zip(requests, answers, strict=True)):
            out.append([protocol_answer(op, a) for a in ans])
            if op in ("precondition_holds", "postcondition_holds"):
                todo = [i for i, (b, why) in enumerate(ans)
                        if b is None and not why.startswith(("ill_typed", "compile",
                                                             "unsupported"))]
                if args[1] is not None and todo and lean_sections(args[0]) is not None:
                    open_specs.append((ri, todo))
            elif op == "classify" and lean_sections(args[0]) is not None:
                todo = [i for i, (b, why) in enumerate(ans)
                        if b is None and not why.startswith("ill_typed")]
                if todo:
                    undecided.append((ri, args[0], todo))
        if undecided:
            self._plausible_stage(undecided, requests, out)
        if open_specs and self.runner.supports_plausible:
            self._spec_plausible_stage(open_specs, requests, out)
        with self._lock:
            for ri, ((op, args), ans, got) in enumerate(zip(requests, answers, out, strict=True)):
                if op in ("precondition_holds", "postcondition_holds"):
                    unknown = [v is Verdict.UNKNOWN for v in got]
                    why = [w if u else "" for (_, w), u in zip(ans, unknown, strict=True)]
                    self.stats.count_unknowns(op, args[1], [
                        w for w, u in zip(why, unknown, strict=True) if u])
                    out[ri] = Verdicts(got, why)
        return out

    def _builders(self) -> dict[str, Callable[..., Plan]]:
        """Each operation's plan builder (in this backend's mode)."""
        return {
            "check_inputs": self._plan_check_inputs,
            "classify": self._plan_classify,
            "precondition_holds": self._plan_decide,
            "postcondition_holds": self._plan_post,
            "run": self._plan_run,
            "test_outputs": self._plan_test,
            "compile": self._plan_compile,
        }

    @property
    def plausible_unavailable(self) -> str:
        """Why VERINA's Plausible stage cannot run here ("" when it can)."""
        if self.runner.supports_plausible:
            return ""
        return f"Plausible is not available on the {self.runner.name} runner"

    def _spec_plausible_stage(self, open_specs: list[tuple[int, list[int]]],
                              requests: Sequence[tuple[str, tuple[Any, ...]]],
                              out: list[list[Any]]) -> None:
        """VERINA's stage 2 for candidate specs: Plausible on the claim and on its
        negation, with VERINA's parameters, where decide gave no answer."""
        plans = []
        for ri, todo in open_specs:
            op, (task, spec, items) = requests[ri]
            post = op == "postcondition_holds"
            name = f"{task.signature.name}_{'postcond' if post else 'precond'}"
            cmds: list[str] = []
            slots: list[Slot] = []
            for i in todo:
                try:
                    term = (render.postcond_term(task, items[i][0], items[i][1]) if post
                            else render.precond_term(task, items[i]))
                except Exception as exc:  # an ill-typed item stays unknown
                    slots += [done_slot(f"ill_typed: {exc}")] * 2
                    continue
                for prop in (f"({term})", f"¬ ({term})"):
                    slots.append(cmd_slot(len(cmds)))
                    cmds.append(render.plausible_command(prop, name, postcond=post))
            plans.append(Plan(render.Variant(task, spec=spec), cmds, slots,
                               verina_plausible_answer))
        answers = self._run_plans(plans)
        for (ri, todo), ans in zip(open_specs, answers, strict=True):
            for k, i in enumerate(todo):
                out[ri][i] = plausible_verdict(ans[2 * k], ans[2 * k + 1])

    def _plausible_stage(
        self, undecided: list[tuple[int, Task, list[int]]],
        requests: Sequence[tuple[str, tuple[Any, ...]]], out: list[list[Any]],
    ) -> None:
        """Stage 2 on inputs decide left open; where Plausible is missing, say so."""
        if not self.runner.supports_plausible:
            for ri, _task, todo in undecided:
                for i in todo:
                    c = out[ri][i]
                    out[ri][i] = Classification(
                        Label.UNKNOWN, "decide",
                        f"{c.detail}; plausible stage skipped: Plausible is not available "
                        f"on the {self.runner.name} runner")
            return
        plans = []
        for ri, task, todo in undecided:
            inputs = requests[ri][1][1]
            plans.append(self._plan_plausible(task, [inputs[i] for i in todo]))
        answers = self._run_plans(plans)
        for (ri, _task, todo), ans in zip(undecided, answers, strict=True):
            for k, i in enumerate(todo):
                pos, neg = ans[2 * k], ans[2 * k + 1]
                if neg == "counterexample" and pos != "counterexample":
                    out[ri][i] = Classification(Label.EXPECTED, "plausible")
                elif pos == "counterexample" and neg != "counterexample":
                    out[ri][i] = Classification(Label.UNEXPECTED, "plausible")
                else:
                    out[ri][i] = Classification(
                        Label.UNKNOWN, "plausible",
                        f"{out[ri][i].detail}; plausible: P {pos}, not-P {neg}")

    def test_outputs(self, task: Task, impl: Implementation | None,
                     pairs: Sequence[tuple[Input, Any]]) -> list[Outcome]:
        """Per (input, expected): ``Outcome(True, value=<equal?>)`` with the equality
        decided by Lean's ``==`` (VERINA's code tests), or why there is no answer."""
        return self.evaluate_many([("test_outputs", (task, impl, pairs))])[0]

    def test_outputs_many(
        self, jobs: Sequence[tuple[Task, Implementation | None, Sequence[tuple[Input, Any]]]]
    ) -> list[list[Outcome]]:
        return self.evaluate_many([("test_outputs", j) for j in jobs])

    def check_inputs_many(self, jobs: Sequence[tuple[Task, Sequence[Input]]]
                          ) -> list[list[str | None]]:
        return self.evaluate_many([("check_inputs", j) for j in jobs])

    def classify_many(self, jobs: Sequence[tuple[Task, Sequence[Input]]]
                      ) -> list[list[Classification]]:
        return self.evaluate_many([("classify", j) for j in jobs])

    def run_many(self, jobs: Sequence[tuple[Task, Implementation | None, Sequence[Input]]]
                 ) -> list[list[Outcome]]:
        return self.evaluate_many([("run", j) for j in jobs])

    def precondition_holds_many(self, jobs: Sequence[tuple[Task, Spec | None, Sequence[Input]]]
                                ) -> list[list[Verdict]]:
        return self.evaluate_many([("precondition_holds", j) for j in jobs])

    def postcondition_holds_many(
        self, jobs: Sequence[tuple[Task, Spec | None, Sequence[tuple[Input, Any]]]]
    ) -> list[list[Verdict]]:
        return self.evaluate_many([("postcondition_holds", j) for j in jobs])

    # ------------------------------------------------------------ the protocol

    def check_inputs(self, task: Task, inputs: Sequence[Input]) -> list[str | None]:
        return self.evaluate_many([("check_inputs", (task, inputs))])[0]

    def classify(self, task: Task, inputs: Sequence[Input]) -> list[Classification]:
        return self.evaluate_many([("classify", (task, inputs))])[0]

    def run(self, task: Task, impl: Implementation | None, inputs: Sequence[Input]
            ) -> list[Outcome]:
        return self.evaluate_many([("run", (task, impl, inputs))])[0]

    def precondition_holds(self, task: Task, spec: Spec | None, inputs: Sequence[Input]
                           ) -> list[Verdict]:
        return self.evaluate_many([("precondition_holds", (task, spec, inputs))])[0]

    def postcondition_holds(self, task: Task, spec: Spec | None,
                            pairs: Sequence[tuple[Input, Any]]) -> list[Verdict]:
        return self.evaluate_many([("postcondition_holds", (task, spec, pairs))])[0]

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        """``None`` when the code/spec elaborates next to the task's definitions."""
        return self.compile_many([(task, impl, spec)])[0]

    def compile_many(
        self, jobs: Sequence[tuple[Task, Implementation | None, Spec | None]]
    ) -> list[str | None]:
        """Compile many candidates at once (one file for all of them, chunk limits allowing)."""
        return [r[0] for r in self.evaluate_many([("compile", j) for j in jobs])]

    def _plan_compile(self, task: Task, impl: Implementation | None = None,
                      spec: Spec | None = None) -> Plan:
        problem = (self._lean_task(task) or self._spec_problem(spec, task)
                   or _impl_problem(impl, task))
        if problem:
            return Plan(None, [], [done_slot(problem)], compile_answer)
        variant = render.Variant(task, spec=spec, impl=impl)
        # `#check @main`: proves the unit was reached, fails if the definition was not added.
        return Plan(variant, [render.check_command("@" + _main_name(variant))], [cmd_slot(0)],
                     compile_answer)


def _impl_problem(impl: Implementation | None, task: Task) -> str | None:
    """``compile: ...`` when the screen refuses a candidate implementation or its imports."""
    if impl is None:
        return None
    why = check_untrusted_lean(impl.code) or _imports_problem(impl.imports, task)
    return f"compile: {why}" if why else None


def _imports_problem(imports: str, task: Task | None) -> str | None:
    """A candidate's ``imports`` may name the task's own modules, Mathlib, Std,
    Batteries and Plausible only."""
    if not imports.strip():
        return None
    own: list[str] = []
    lean = lean_sections(task) if task is not None else None
    if lean is not None:
        own = render.import_lines(lean.task_imports + "\n" + lean.solution_imports)
    return check_imports(imports, own)


def _main_name(variant: render.Variant) -> str:
    name = variant.task.signature.name
    if variant.spec is not None:
        return f"{name}_postcond" if variant.spec.postcond is not None else f"{name}_precond"
    return name
