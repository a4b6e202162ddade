"""The orchestrator: every stage over every task, resumable, with a manifest.

Stages run stage-major (all tasks through one stage, then the next), so a
backend that batches across tasks can, and so each stage ends with one
summary table. Every per-task result is a stage artifact in the run
directory; a rerun loads artifacts whose fingerprint still matches and redoes
only the rest. One failing task is recorded in the manifest and skipped by
later stages; it never stops the run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from veriscale import __version__, artifacts
from veriscale.artifacts import Artifact, ReductionArtifact
from veriscale.backends.base import Backend, Verdict, progress_owner, prover_processes
from veriscale.backends.causes import VERDICT_UNKNOWN_PREFIX
from veriscale.backends.coalesce import can_coalesce, coalesced_map
from veriscale.backends.datasets import NotADataset, detect_format, load_benchmark, task_dirs
from veriscale.backends.language import plugin_for_backend, show_value
from veriscale.benchmark.fingerprint import task_fingerprint
from veriscale.benchmark.model import Input, Task
from veriscale.execution import concurrent_map, is_remote
from veriscale.llm.concurrency import llm_task_map, llm_workers
from veriscale.llm.config import load_llm_config
from veriscale.llm.provider import (
    LLMUnavailable,
    raise_if_stopped,
    request_failures,
    usage_summary,
)
from veriscale.pipeline import stages
from veriscale.pipeline.config import RunConfig, resolve_backend
from veriscale.pipeline.degraded import degraded_causes
from veriscale.pipeline.progress import FileProgress, print_stage_summary, stage_bars
from veriscale.pipeline.suites import (
    KillData,
    assemble_plus,
    contradicted_rows,
    kill_data,
    reduce_to_lite,
    write_suite,
)
from veriscale.rundir import RunDir, replace_dir_atomic, write_json_atomic

ORACLE_CACHE = "oracle_cache.sqlite"
"""The run's oracle cache, in the run directory (``--no-cache`` turns it off)."""

EXPANSION_STAGES = ("candidates", "classify", "outputs", "adversaries", "unexpected")

log = logging.getLogger(__name__)


def _hash(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


@dataclass
class RunSummary:
    run_dir: Path
    tasks: list[str]
    errors: dict[str, dict[str, str]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, dict[str, Any]] = field(default_factory=dict)
    oracle_cache: dict[str, Any] = field(default_factory=dict)
    degraded: dict[str, list[str]] = field(default_factory=dict)  # task -> causes
    # task -> stage -> failed LLM requests of the records stored provisional
    provisional: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # task -> original rows left out of Plus and Lite ({"input", "why"})
    contradicted: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _stats_of(backend: Any) -> dict[str, float]:
    """The backend's process/check/second counters, and its UNKNOWN verdicts by cause
    as ``unknown <which>: <cause>`` (zeros without a backend)."""
    st = getattr(backend, "stats", None)
    unknowns = getattr(st, "unknowns", None) or {}
    extra = getattr(st, "extra", None) or {}
    at_once = extra.get("concurrency") or {}
    processes = getattr(st, "processes", 0)  # files, each a process unless a session served it
    started = prover_processes(processes, extra)
    return {"processes": processes, "checks": getattr(st, "checks", 0),
            "seconds": float(getattr(st, "seconds", 0.0)),
            **({"prover processes": started} if started is not None else {}),
            # wall seconds with n oracle files running at once (were the cores busy?)
            **{f"wall seconds with {n} at once": v for n, v in sorted(at_once.items())},
            **{VERDICT_UNKNOWN_PREFIX + k: v for k, v in sorted(unknowns.items())}}


class Pipeline:
    def __init__(
        self,
        benchmark_dir: Path,
        run_dir: Path,
        config: RunConfig,
        backend: Backend | None = None,
        provider: Any = None,
        console: Console | None = None,
        cache: bool = True,
    ) -> None:
        self.benchmark_dir = Path(benchmark_dir)
        self.use_cache = cache
        self._oracle_cache: Any = None
        self._cached: Backend | None = None
        self.rd = RunDir(run_dir)
        self.config = resolve_backend(config, self.benchmark_dir)
        self.console = console or Console(stderr=True)
        self._backend = backend
        self._executor: Any = None
        self._provider = provider
        self._provider_lock = threading.Lock()
        self.errors: dict[str, dict[str, str]] = {}
        self.degraded: dict[str, list[str]] = {}  # task -> why (pipeline.degraded)
        # task -> original rows left out of Plus and Lite: the ground truth contradicts them
        self.contradicted: dict[str, list[dict[str, Any]]] = {}
        # task -> stage -> failed LLM requests: records stored provisional this run
        self.provisional: dict[str, dict[str, list[str]]] = {}
        self._provisional_lock = threading.Lock()
        self.timings: dict[str, float] = {}
        self.counts: dict[str, dict[str, Any]] = {}
        self.resumed: dict[str, int] = {}
        self.tasks: list[Task] = []
        self.load_issues: list[str] = []
        self.fp: dict[tuple[str, str], str] = {}
        self.evaluation_time: dict[str, Any] = {}
        self.code_coverage: dict[str, Any] = {}
        self.stage_backend: dict[str, dict[str, float]] = {}  # per stage: processes, checks
        self.suites_kept: list[str] = []
        before = self.rd.load_manifest()
        # what each stage cost when its records were computed (over the runs that made
        # them); ``timings`` is what this run spent
        self.previous_timings: dict[str, float] = dict(
            before.get("timings_computed") or before.get("timings") or {})
        self.computed_timings: dict[str, float] = {}

    # ---------------------------------------------------------------- wiring

    @property
    def backend(self) -> Backend:
        """The oracle as stages see it: behind the SQLite oracle cache unless disabled."""
        raw = self.raw_backend
        if not self.use_cache:
            return raw
        if self._cached is None:
            from veriscale.backends.cache import OracleCache, with_cache

            self._oracle_cache = OracleCache(self.rd.root / ORACLE_CACHE)
            self._cached = with_cache(raw, self._oracle_cache)
            keep_stops = getattr(raw, "keep_stops", None)  # base.StopsHook: resumes skip them
            if callable(keep_stops):
                keep_stops(self._oracle_cache, self._cached.namespace)
        return self._cached

    @property
    def raw_backend(self) -> Backend:
        """The backend itself (timed evaluations must not be served from the cache)."""
        if self._backend is None:
            from veriscale.backends import isolation
            from veriscale.backends.registry import make_backend

            assert self.config.backend is not None  # resolved at construction
            isolation.configure(self.config.sandbox)  # raises when "os" cannot isolate
            options = dict(self.config.backend_options)
            plugin = plugin_for_backend(self.config.backend)
            if plugin is not None and plugin.backend_takes_seed:
                options.setdefault("seed", self.config.seed)  # seeds `random` per candidate
            self._backend = make_backend(self.config.backend, executor=self.executor, **options)
        return self._backend

    @property
    def executor(self) -> Any:
        """Where the backend's units run (``[execution]``); never part of a fingerprint."""
        if self._executor is None:
            self._executor = self.config.execution.make()
        return self._executor

    @property
    def provider(self) -> Any:
        with self._provider_lock:  # stages may ask for it from several threads at once
            return self._make_provider()

    def _make_provider(self) -> Any:
        if self._provider is None:
            from veriscale.llm.provider import make_provider

            self._provider = make_provider(
                self.config.llm,
                backend=self.config.backend,
                seed=self.config.seed,
                cache_path=self.rd.root / "llm_cache.sqlite",
            )
            if hasattr(self._provider, "notify"):  # LLM warnings go to the run's console
                self._provider.notify = lambda m: self.console.print(f"[bold red]LLM:[/] {escape(str(m))}")
        return self._provider

    def load(self) -> None:
        tasks, issues = load_benchmark(self.benchmark_dir, self.config.tasks)
        self.tasks = tasks
        self.load_issues = [str(i) for i in issues]
        for task in tasks:
            if task.unreadable:  # unknown rows are not zero rows: never expand from them
                files = ", ".join(f"{f}: {why}" for f, why in sorted(task.unreadable.items()))
                self.errors[task.id] = {"stage": "load", "error": f"unreadable {files}"}
        for issue in issues[:20]:
            self.console.print(f"[yellow]load:[/] {escape(str(issue))}")
        if len(issues) > 20:
            self.console.print(f"[yellow]load:[/] ... and {len(issues) - 20} more issues")

    # ---------------------------------------------------------------- stages

    def _stage(
        self,
        name: str,
        fingerprint: Callable[[Task], str],
        compute: Callable[[Task, Backend], Any],
        needs_backend: bool = True,
        asks_llm: bool = False,
    ) -> None:
        """Run one stage over all live tasks, loading finished artifacts instead of redoing.

        With a backend that batches across tasks (``evaluate_many``), the tasks'
        oracle calls are coalesced into shared batches (see backends/coalesce.py).
        """
        start = time.perf_counter()
        live = [t for t in self.tasks if t.id not in self.errors]
        todo: list[Task] = []
        for task in live:
            fp = fingerprint(task)
            self.fp[(task.id, name)] = fp
            if self.rd.load_artifact(task.id, name, fp, task.signature) is None:
                todo.append(task)
        done = len(live) - len(todo)
        with stage_bars(self.console) as progress:
            bar = progress.add_task("", total=len(live), completed=done, label=name)
            files = FileProgress(progress, name) if needs_backend and todo else None
            hooked = self._hook_progress(files)

            def one(task: Task, backend: Backend) -> Any:
                data = compute(task, backend)
                if asks_llm:
                    self._llm_outcome(task, name, data)
                record = data if isinstance(data, Artifact) else artifacts.from_json(name, data)
                # saved as soon as it is ready, so a killed run keeps finished tasks
                self.rd.save_artifact(task.id, name, self.fp[(task.id, name)], record)
                progress.update(bar, advance=1, description=task.id)
                return data

            backend = self.backend if needs_backend and todo else None
            workers = llm_workers(self.config.llm) if asks_llm else 1
            before = _stats_of(backend)
            try:
                if backend is not None and can_coalesce(backend) and len(todo) > 1:
                    results = coalesced_map(backend, one, todo)
                elif backend is not None and is_remote(self._executor) and len(todo) > 1:
                    # Units run elsewhere: keep several tasks' oracle calls in flight.
                    results = concurrent_map(backend, one, todo,
                                             self.config.execution.concurrent_tasks)
                elif workers > 1 and len(todo) > 1:
                    results = llm_task_map(one, todo, backend, workers)
                else:
                    results = []
                    for task in todo:
                        try:
                            results.append(one(task, backend))
                        except Exception as exc:
                            results.append(exc)
            finally:
                if hooked is not None:
                    hooked.progress = None
                if backend is not None:
                    after = _stats_of(backend)
                    delta = {k: round(after[k] - before.get(k, 0), 3) for k in after}
                    self.stage_backend[name] = {k: v for k, v in delta.items()
                                                if v or not k.startswith(VERDICT_UNKNOWN_PREFIX)}
        if asks_llm:
            raise_if_stopped(self._provider)  # the endpoint cannot answer at all
        for task, result in zip(todo, results, strict=True):
            if isinstance(result, BaseException):  # one bad task never stops the run
                self.errors[task.id] = {"stage": name,
                                        "error": f"{type(result).__name__}: {result}"}
                self.console.print(f"[red]{escape(task.id)}[/]: {escape(f'{name} failed: {result}')}")
        elapsed = time.perf_counter() - start
        previous = self.previous_timings.get(name, 0.0)
        # This run's time; beside it, what the stage's records cost when computed (a
        # fully resumed stage keeps that time).
        self.timings[name] = elapsed
        self.computed_timings[name] = previous if not todo and previous else elapsed + (
            previous if done else 0.0)
        self.resumed[name] = done
        self._summarise(name)
        # what each finished stage cost survives a stop before the run's end (a run that
        # spans sessions is resumed after a kill; its manifest was written only at the end)
        self.rd.save_manifest(self.manifest())

    def _llm_outcome(self, task: Task, name: str, data: Any) -> None:
        """A stage whose LLM requests failed is stored as provisional (its fingerprint
        never matches), so the next run asks again; a stopped endpoint stops the run."""
        raise_if_stopped(self._provider)
        failures = request_failures(self._provider, task.id)
        if failures and isinstance(data, dict):
            data["llm_provisional"] = failures[:20]
            self.fp[(task.id, name)] = self.fp[(task.id, name)] + "-provisional"
            with self._provisional_lock:
                self.provisional.setdefault(task.id, {})[name] = failures[:3]

    def _hook_progress(self, files: FileProgress | None) -> Any:
        """Let a backend that reports its files (Lean, Coq) drive the file/check bar."""
        if files is None:
            return None
        backend = progress_owner(self.backend)
        if backend is None:
            return None
        backend.progress = files.update
        files.label = f"  {getattr(backend, 'name', 'oracle')}"
        return backend

    def artifact(self, task: Task, name: str) -> Any:
        """The typed record of stage ``name`` for ``task`` (computed by this run)."""
        data = self.rd.load_artifact(task.id, name, self.fp[(task.id, name)],
                                     task.signature)
        if data is None:
            raise RuntimeError(f"{task.id}: artifact of stage {name} is missing")
        return data

    def _inputs(self, task: Task, name: str, key: str) -> list[stages.CandidateInput]:
        """Candidate inputs of a record's field ``key``, decoded once per run."""
        return self.artifact(task, name).decoded(
            key, lambda rows: stages.decode_candidates(task, rows))

    def _pairs(self, task: Task) -> list[tuple[Input, Any, str]]:
        """The expected pairs (input, expected output, provenance), decoded once per run."""
        sig = task.signature
        return self.artifact(task, "outputs").decoded("pairs", lambda rows: [
            (sig.load_input(p["input"]), sig.load_output(p["expected"]), p["provenance"])
            for p in rows])

    def _summarise(self, name: str) -> None:
        totals: dict[str, int] = {}
        for task in self.tasks:
            if task.id in self.errors or (task.id, name) not in self.fp:
                continue
            data = self.rd.load_artifact(task.id, name, self.fp[(task.id, name)],
                                         task.signature)
            for key, value in (data.counts if data else {}).items():
                if isinstance(value, int):
                    totals[key] = totals.get(key, 0) + value
        self.counts[name] = totals
        resumed = self.resumed.get(name, 0)
        computed = self.computed_timings.get(name, self.timings[name])
        title = (f"stage {name}: {self.timings[name]:.1f}s"
                 + (f" this run ({computed:.1f}s when computed; " if resumed else " (")
                 + f"{resumed} of {len(self.tasks)} tasks resumed)")
        oracle = self.stage_backend.get(name)
        log.info("%s; %s; oracle %s", title, json.dumps(totals), json.dumps(oracle or {}))
        print_stage_summary(self.console, title, totals, oracle or {})

    def run_expansion(self) -> None:
        cfg = self.config
        # Only the [llm] settings that can change an answer: transport never invalidates.
        llm = json.dumps(load_llm_config(cfg.llm).result_settings(), sort_keys=True)
        base = _hash(cfg.fingerprint("seed", "seeds", "mutation"), llm)
        oracle = cfg.fingerprint("backend", "backend_options")
        # Every knob a stage's result depends on, and no other (the backend compiles
        # the adversaries, so its options count too).
        adv_gen = _hash(cfg.fingerprint("seed", "adversaries.max_specs",
                                        "adversaries.max_adver_impl", "backend",
                                        "backend_options"), llm)
        adv_cfg = cfg.fingerprint("adversaries", "backend", "backend_options")
        gt_post = cfg.fingerprint("suite.require_gt_postcondition")

        self._stage(
            "candidates",
            lambda t: _hash(task_fingerprint(t), base),
            lambda t, b: stages.stage_candidates(t, cfg, self.provider),
            needs_backend=False,
            asks_llm=True,
        )
        self._stage(
            "classify",
            lambda t: _hash(self.fp[(t.id, "candidates")], oracle),
            lambda t, b: stages.stage_classify(t, self._inputs(t, "candidates", "candidates"), b),
        )
        self.rd.forget("candidates")  # its one reader is done
        self._stage(
            "outputs",
            lambda t: _hash(self.fp[(t.id, "classify")], gt_post),
            lambda t, b: stages.stage_outputs(
                t, self._inputs(t, "classify", "expected_inputs"), b,
                check_postcondition=self.config.suite.require_gt_postcondition,
            ),
        )
        self._stage(
            "adversaries",
            lambda t: _hash(task_fingerprint(t), adv_gen),
            self._adversaries,
            asks_llm=True,
        )
        self._stage(
            "unexpected",
            lambda t: _hash(self.fp[(t.id, "outputs")], self.fp[(t.id, "adversaries")], adv_cfg),
            self._unexpected,
        )
        self.rd.forget("adversaries")  # its one reader is done

    def _adversaries(self, task: Task, backend: Backend) -> dict[str, Any]:
        from veriscale.expansion.adversarial import generate_adversaries

        return generate_adversaries(task, self.provider, backend, self.config.adversaries)

    def _unexpected(self, task: Task, backend: Backend) -> dict[str, Any]:
        from veriscale.expansion.adversarial import synthesize_unexpected

        pairs = [(i, o) for i, o, _ in self._pairs(task)]
        from veriscale.expansion.mutation import task_seed

        return synthesize_unexpected(
            task, pairs, self.artifact(task, "adversaries").to_json(), backend,
            self.config.adversaries, seed=task_seed(self.config.seed, task.id),
        )

    # ---------------------------------------------------------------- suites

    def build_suites(self, lite: bool = True) -> dict[str, Any]:
        """Assemble Plus (and reduce it to Lite) for every task that finished expansion."""
        start = time.perf_counter()
        plus_tasks: list[Task] = []
        lite_tasks: list[Task] = []
        logs: dict[str, Any] = {}
        red = self.config.reduction
        for task in self.tasks:
            if task.id in self.errors:
                continue
            try:
                plus, kill = self._plus(task)
                if lite:
                    reduced, log = reduce_to_lite(plus, kill, red)
            except Exception as exc:  # one bad task never stops the run
                self.errors[task.id] = {"stage": "suites", "error": f"{type(exc).__name__}: {exc}"}
                self.console.print(f"[red]{escape(task.id)}[/]: {escape(f'building suites failed: {exc}')}")
                continue
            plus_tasks.append(plus)
            classified = self.rd.read_artifact(task.id, "classify", task.signature)
            valid = len({t.input for t in task.tests}) - len(self.contradicted.get(task.id, ()))
            causes = degraded_causes(valid, len(plus.tests),
                                     classified.counts if classified is not None else {})
            if causes:
                self.degraded[task.id] = causes
            if lite:
                lite_tasks.append(reduced)
                logs[task.id] = log
                self.rd.save_artifact(task.id, "reduction", self.config.fingerprint("reduction"),
                                      ReductionArtifact.from_json(log))
        names = ["plus", "lite"] if lite else ["plus"]
        if self.errors and any((self.rd.root / n).exists() for n in names):
            # An incomplete suite never replaces a complete one.
            self.suites_kept = names
            self.console.print(
                f"[yellow]plus/ and lite/ kept from the previous run:[/] {len(self.errors)} "
                "task(s) failed, so the new suites would be incomplete")
        else:
            self.write_suite("plus", plus_tasks)
            if lite:
                self.write_suite("lite", lite_tasks)
        self.timings["suites"] = time.perf_counter() - start
        return logs

    def time_evaluation(self) -> None:
        """Table 2: how long the ground truth takes to evaluate on each suite."""
        from veriscale.evaluation.harness import evaluate
        from veriscale.evaluation.mutants import gt_candidate

        mode = self.config.report.time_evaluation
        plugin = plugin_for_backend(self.config.backend or "")
        if mode == "off" or (mode == "auto" and not (plugin and plugin.cheap_evaluation)):
            return
        timing: dict[str, Any] = {}
        for name in ("original", "plus", "lite"):
            folder = self.rd.root / name
            try:
                tasks, _ = load_benchmark(folder)
            except NotADataset:  # absent, or empty because every task failed
                continue
            tasks = [t for t in tasks if t.id not in self.errors]
            report = evaluate(self.raw_backend, tasks, {t.id: [gt_candidate(t)] for t in tasks},
                              suite=name)
            scores = report.scores()
            timing[name] = {
                "tasks": len(tasks),
                "seconds": round(report.wall_seconds, 3),
                "code_seconds": round(report.code_seconds, 3),
                "spec_seconds": round(report.spec_seconds, 3),
                "gt_pass_rate": {m: v.get("lower", {}).get("pass@1") for m, v in scores.items()},
            }
        self.evaluation_time = timing

    def measure_coverage(self) -> None:
        """How much of each task's reference code the original, Plus and Lite tests run
        (the paper keeps 100 %), where the backend can measure it (Python); otherwise
        why not, without running anything. A failure to measure never fails the run."""
        from veriscale.backends.registry import backend_class
        from veriscale.evaluation.coverage import suite_coverage

        name = self.config.backend or ""
        cls = backend_class(name)
        if not callable(getattr(cls, "reference_coverage", None)):  # base.CoverageMeter
            self.code_coverage = {"available": False, "reason": getattr(
                cls, "coverage_unavailable", "") or f"the {name} backend cannot measure it"}
            return
        ids = [t.id for t in self.tasks if t.id not in self.errors]
        suites: dict[str, Any] = {}
        for suite in ("original", "plus", "lite"):
            folder = self.rd.root / suite
            if not folder.is_dir():
                continue
            try:
                got = suite_coverage(folder, ids, {name: self.raw_backend})
            except Exception as exc:  # the figures are a report's, not the suites'
                log.warning("coverage of %s not measured: %s", suite, exc)
                suites[suite] = {"error": str(exc)}
                continue
            suites[suite] = {k: v for k, v in got.items() if k not in ("suite", "load_issues")}
        self.code_coverage = {"available": True, "suites": suites}

    def audit(self, accept_multiple: Sequence[str] = ()) -> dict[str, Any]:
        """The ground-truth audit of every finished task (pipeline/audit.py), written to
        ``RUN_DIR/audit.json``: from the stage records, plus one oracle round asking the
        GT postcondition about the benchmark's own unexpected outputs."""
        from veriscale.backends import dispatch
        from veriscale.pipeline.audit import audit_json, speak_witness, task_findings

        start = time.perf_counter()
        live = [t for t in self.tasks if t.id not in self.errors]
        asked = [t for t in live if any(r.unexpected for r in t.tests)]
        answers = dispatch.many(self.backend, "postcondition_holds", [
            (t, None, [(r.input, u) for r in t.tests for u in r.unexpected]) for t in asked])
        accepted_unexpected: dict[str, list[dict[str, Any]]] = {}
        for t, verdicts in zip(asked, answers, strict=True):
            pairs = [(r, u) for r in t.tests for u in r.unexpected]
            sig = t.signature
            accepted_unexpected[t.id] = [
                {"input": sig.dump_input(r.input), "reference": sig.dump_output(r.expected),
                 "other": sig.dump_output(u)}
                for (r, u), v in zip(pairs, verdicts, strict=True) if v is Verdict.TRUE]
        runner = getattr(getattr(self.raw_backend, "runner", None), "name", None)
        source = self.raw_backend.name + (f" ({runner})" if runner else "")
        findings, costs = [], {}
        unaudited: dict[str, str] = {}
        for t in live:
            try:
                unexpected = self.rd.read_artifact(t.id, "unexpected", t.signature)
                got, cost = task_findings(t, self.artifact(t, "outputs"), unexpected,
                                          self.contradicted.get(t.id, []), source,
                                          accepted_unexpected.get(t.id, []))
            except Exception as exc:  # one task's records never stop the audit of the rest
                unaudited[t.id] = f"{type(exc).__name__}: {exc}"
                continue
            for f in got:  # witnesses as the task's language writes them
                f.witness = speak_witness(t, f.witness)
                f.witnesses = [speak_witness(t, w) for w in f.witnesses]
            findings += got
            costs[t.id] = cost
        data = audit_json(findings, costs, list(accept_multiple), len(live))
        if unaudited:
            data["unaudited"] = unaudited
        write_json_atomic(self.rd.root / "audit.json", data)
        self.timings["audit"] = time.perf_counter() - start
        return data

    def _computed_timings(self) -> dict[str, float]:
        """What each stage's records cost when computed (over the runs that made them),
        and their sum as ``total`` (this run's total is ``timings``' own)."""
        stages = {k: v for k, v in {**self.previous_timings, **self.timings,
                                    **self.computed_timings}.items() if k != "total"}
        return {k: round(v, 3) for k, v in {**stages, "total": sum(stages.values())}.items()}

    def contradicted_shown(self) -> dict[str, list[dict[str, Any]]]:
        """The contradicted rows with their inputs in each task's language (what the
        manifest, the report and the console show)."""
        from veriscale.pipeline.audit import speak_witness

        by_id = {t.id: t for t in self.tasks}
        return {tid: [speak_witness(by_id[tid], row) for row in rows]
                for tid, rows in self.contradicted.items()}

    def _plus(self, task: Task) -> tuple[Task, KillData]:
        sig = task.signature
        out = self.artifact(task, "outputs")
        unexp = self.artifact(task, "unexpected")
        pairs = self._pairs(task)
        unexpected_outputs: dict[Input, list[Any]] = {}
        for row in unexp.rows:
            unexpected_outputs[sig.load_input(row["input"])] = [
                sig.load_output(u) for u in row["unexpected"]
            ]
        kill = kill_data(sig, unexp)
        rejects = [c.input for c in self._inputs(task, "classify", "unexpected_inputs")]
        contradicted = contradicted_rows(
            task,
            {sig.load_input(m["input"]): sig.load_output(m["reference"])
             for m in out.reference_mismatches},
            {sig.load_input(g["input"]): sig.load_output(g["reference"])
             for g in out.gt_rejected},
            set(rejects), show=lambda v: show_value(task, sig.return_type, v))
        if contradicted:  # in the records' encoding; shown in the task's language
            self.contradicted[task.id] = [
                {"input": sig.dump_input(i), "why": why} for i, why in contradicted.items()]
        plus = assemble_plus(
            task, pairs, unexpected_outputs, rejects, self.config.suite.keep_nonkilling_pairs,
            contradicted,
        )
        return plus, kill

    def write_suite(self, name: str, tasks: list[Task]) -> Path:
        return write_suite(self.rd.root / name, tasks)

    def copy_original(self) -> None:
        final = self.rd.root / "original"
        if final.exists():
            return
        staging = self.rd.root / ".original.staging"
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir(parents=True)
        wanted = {t.id for t in self.tasks}
        for d in task_dirs(self.benchmark_dir):
            if d.name in wanted:
                shutil.copytree(d, staging / d.name)
        replace_dir_atomic(staging, final)

    # ---------------------------------------------------------------- manifest

    def manifest(self) -> dict[str, Any]:
        backend_stats: dict[str, Any] = {}
        if self._backend is not None:
            s = self._backend.stats
            backend_stats = {
                "name": self._backend.name,
                "processes": s.processes,
                "checks": s.checks,
                "seconds": round(s.seconds, 3),
                **s.extra,
                **({"unknowns": dict(sorted(s.unknowns.items()))} if s.unknowns else {}),
            }
        usage = usage_summary(self._provider, self.config.llm, self.rd.root / "llm_cache.sqlite")
        formats = sorted({detect_format(d) for d in task_dirs(self.benchmark_dir)})
        return {
            "veriscale": __version__,
            "benchmark": str(self.benchmark_dir.resolve()),
            "benchmark_format": formats,
            "config": self.config.model_dump(mode="json"),
            "seed": self.config.seed,
            "isolation": _isolation_json(),
            "versions": {"python": platform.python_version(), "veriscale": __version__},
            "tasks": [t.id for t in self.tasks],
            "load_issues": self.load_issues,
            "errors": self.errors,
            "degraded": self.degraded,
            "contradicted_rows": self.contradicted_shown(),
            "llm_provisional": self.provisional,
            "suites_kept_from_previous_run": self.suites_kept,
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
            "timings_computed": self._computed_timings(),
            "resumed_tasks": self.resumed,
            "counts": self.counts,
            "backend_stats": backend_stats,
            "execution": self._executor.describe() if self._executor is not None else {},
            "backend_stats_by_stage": self.stage_backend,
            "llm_usage": usage,
            "oracle_cache": self.cache_stats(),
            "evaluation_time": self.evaluation_time,
            "code_coverage": self.code_coverage,
        }

    def cache_stats(self) -> dict[str, Any]:
        """Oracle-cache hits and misses of this run (items, not calls)."""
        if not self.use_cache:
            return {"enabled": False}
        c = self._oracle_cache
        return {"enabled": True, "path": ORACLE_CACHE,
                "hits": c.hits if c else 0, "misses": c.misses if c else 0}

    def close(self) -> None:
        try:
            if self._backend is not None:
                self._backend.close()
        finally:
            if self._executor is not None:
                self._executor.close()
            if self._oracle_cache is not None:
                self._oracle_cache.close()


def run_pipeline(
    benchmark_dir: Path,
    run_dir: Path,
    config: RunConfig,
    *,
    reduce: bool = True,
    report: bool = True,
    console: Console | None = None,
    backend: Backend | None = None,
    provider: Any = None,
    cache: bool = True,
) -> RunSummary:
    """Expand (and by default reduce and report) ``benchmark_dir`` into ``run_dir``."""
    pipe = Pipeline(benchmark_dir, run_dir, config, backend=backend, provider=provider,
                    console=console, cache=cache)
    start = time.perf_counter()
    pipe.rd.lock()  # before anything is read or removed; raises RunDirLocked
    try:
        pipe.load()
        pipe.rd.remove_stale_temporaries()
        pipe.copy_original()
        try:
            pipe.run_expansion()
        except LLMUnavailable:  # record what was spent and why, then stop
            pipe.timings["total"] = time.perf_counter() - start
            pipe.rd.save_manifest(pipe.manifest())
            raise
        pipe.build_suites(lite=reduce)
        pipe.audit(config.audit.accept_multiple)
        pipe.measure_coverage()
        if reduce:
            pipe.time_evaluation()
        pipe.timings["total"] = time.perf_counter() - start
        pipe.rd.save_manifest(pipe.manifest())
        if report:
            from veriscale.report.build import write_report

            write_report(pipe.rd.root)
    finally:
        pipe.close()
        pipe.rd.unlock()
    return RunSummary(pipe.rd.root, [t.id for t in pipe.tasks], pipe.errors, pipe.timings,
                     pipe.counts, pipe.cache_stats(), pipe.degraded, pipe.provisional,
                     pipe.contradicted_shown())


def _isolation_json() -> dict[str, Any]:
    """Which OS isolation untrusted code ran under (for the manifest)."""
    from veriscale.backends import isolation

    return isolation.current().to_json()
