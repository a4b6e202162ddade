"""The report of a run directory: ``report.md`` plus PNG plots.

What it shows (each section says "not available" when its inputs are missing,
so a half-finished or resumed run still gets a report):

* the paper's Table 1 for this run: mean (min–max) of expected pairs,
  unexpected outputs and unexpected inputs per task, for the original
  benchmark, Plus and Lite, with multipliers over the original means;
* per-task figures: the three volumes per suite, adversaries tried / compiled /
  killing, and how many of the adversaries Plus kills Lite still kills;
* the reductions' own logs (set-cover size, budget overflows, reject stages);
* wall time per stage, backend process counts and LLM usage from the manifest.

Reading is separated from rendering: :func:`collect` builds a
:class:`RunReport` from the directory, :func:`render_markdown` turns it into
text, :func:`write_report` does both and draws the plots.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from veriscale.backends.causes import VERDICT_UNKNOWN_PREFIX
from veriscale.benchmark.model import Task
from veriscale.report.stats import TaskCounts, counts_of, dataset_counts, multipliers, suite_stats

log = logging.getLogger(__name__)

SUITES = ("original", "plus", "lite")
SUITE_TITLES = {"original": "Original", "plus": "Plus", "lite": "Lite"}
METRICS = ("pairs", "unexpected_outputs", "unexpected_inputs")
METRIC_TITLES = {
    "pairs": "Expected input-output pairs",
    "unexpected_outputs": "Unexpected outputs",
    "unexpected_inputs": "Unexpected inputs",
}
NOT_AVAILABLE = "_not available_"


# --------------------------------------------------------------------------- data


@dataclass
class TaskFigures:
    """Everything the report knows about one task; ``None`` = not available."""

    task_id: str
    volumes: dict[str, dict[str, int]] = field(default_factory=dict)  # suite -> metric -> n
    adversaries_tried: int | None = None
    adversaries_compiled: int | None = None
    adversaries_killing: int | None = None  # killed by the full (Plus) suite
    adversaries_killed_by_lite: int | None = None
    set_cover_size: int | None = None
    set_cover_exceeds_budget: bool | None = None
    reject_stages: dict[str, int] | None = None

    @property
    def lite_kill_coverage(self) -> float | None:
        if self.adversaries_killing is None or self.adversaries_killed_by_lite is None:
            return None
        if self.adversaries_killing == 0:
            return None
        return self.adversaries_killed_by_lite / self.adversaries_killing


@dataclass
class RunReport:
    run_dir: Path
    manifest: dict[str, Any]
    suites: dict[str, list[Task]]  # only suites that could be loaded
    load_issue_counts: dict[str, int]
    tasks: list[TaskFigures]
    table1: dict[str, dict[str, Any]]  # suite -> ``stats.suite_stats`` of its tasks
    plots: list[Path] = field(default_factory=list)

    def multipliers(self, suite: str) -> dict[str, float | None]:
        """Table 1 multipliers of ``suite`` over the original (empty without an original)."""
        if suite == "original" or "original" not in self.table1 or suite not in self.table1:
            return {}
        return multipliers(self.table1["original"], self.table1[suite])


def volume_text(summary: dict[str, Any], multiplier: float | None = None,
                with_multiplier: bool = False) -> str:
    """``mean (min–max)`` as in the paper's Table 1, optionally ``(×m)``."""
    if summary.get("mean") is None:
        return "—"
    out = f"{summary['mean']:.2f} ({summary['min']}–{summary['max']})"
    if with_multiplier:
        out += f" (×{multiplier:.2f})" if multiplier is not None else " (×—)"
    return out


# --------------------------------------------------------------------------- reading


def _read_json(path: Path) -> Any | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_artifact(run_dir: Path, task_id: str, stage: str, task: Task | None = None
                  ) -> Any | None:
    """A stage's typed record (:mod:`veriscale.artifacts`), as the run wrote it (an older
    record is upgraded where ``task`` gives its signature)."""
    from veriscale.rundir import RunDir

    return RunDir(run_dir).read_artifact(task_id, stage,
                                         None if task is None else task.signature)


@dataclass
class LoadedSuites:
    tasks: dict[str, list[Task]] = field(default_factory=dict)
    counts: dict[str, list[TaskCounts]] = field(default_factory=dict)
    issues: dict[str, int] = field(default_factory=dict)


def load_suites(run_dir: Path) -> LoadedSuites:
    """The original / plus / lite suites that exist and load, their counts and issues."""
    from veriscale.backends.datasets import NotADataset, load_benchmark

    out = LoadedSuites()
    for name in SUITES:
        folder = Path(run_dir) / name
        if not folder.is_dir():
            continue
        try:
            tasks, found = load_benchmark(folder)
        except (NotADataset, OSError) as exc:
            log.warning("%s: cannot load: %s", folder, exc)
            continue
        out.tasks[name] = tasks
        out.counts[name] = suite_counts(folder, tasks)
        out.issues[name] = len(found)
    return out


def suite_counts(folder: Path, tasks: list[Task]) -> list[TaskCounts]:
    """Table 1 counts per task, from the raw files as the paper counts them.

    Every stored row counts even when a value does not decode; when the raw
    read fails, the counts of the loaded tasks are used instead.
    """
    try:
        return dataset_counts(folder)
    except Exception as exc:
        log.warning("%s: raw counts unavailable (%s); counting loaded tasks", folder, exc)
        return [counts_of(t) for t in tasks]


def _as_dict(counts: TaskCounts) -> dict[str, int]:
    return {m: getattr(counts, m) for m in METRICS}


def adversary_figures(
    figures: TaskFigures, run_dir: Path, plus: Task | None, lite: Task | None
) -> None:
    """Fill the adversary columns of ``figures`` from the task's stage records:
    adversaries tried and compiled from the adversaries stage (else the unexpected
    stage's list), kills from the kill matrix the unexpected stage writes."""
    adversaries = read_artifact(run_dir, figures.task_id, "adversaries", plus or lite)
    unexpected = read_artifact(run_dir, figures.task_id, "unexpected", plus or lite)
    if adversaries is not None:
        figures.adversaries_tried = len(adversaries.adversaries)
        figures.adversaries_compiled = sum(
            1 for a in adversaries.adversaries if a.get("compile_error") is None)
    elif unexpected is not None and unexpected.adversaries:
        figures.adversaries_tried = len(unexpected.adversaries)
        figures.adversaries_compiled = sum(1 for a in unexpected.adversaries if a.get("compiled"))

    if unexpected is not None:
        task = plus or lite
        kills: dict[Any, set[str]] = {}
        cells = unexpected.kills(task.signature) if task is not None else [
            (json.dumps(rec["input"], sort_keys=True, ensure_ascii=False), rec["adversary"])
            for rec in unexpected.killed()]  # no suite to read the inputs with: as text
        for key, adversary in cells:
            kills.setdefault(key, set()).add(str(adversary))
        plus_inputs = None if plus is None else {t.input for t in plus.tests}
        killed_plus = {a for k, ids in kills.items()
                       if plus_inputs is None or k in plus_inputs for a in ids}
        figures.adversaries_killing = len(killed_plus)
        if lite is not None:
            lite_inputs = {t.input for t in lite.tests}
            figures.adversaries_killed_by_lite = len(
                {a for k, ids in kills.items() if k in lite_inputs for a in ids}
            )

    reduction = read_artifact(run_dir, figures.task_id, "reduction", plus or lite)
    if reduction is not None:
        pairs = reduction.pairs
        if pairs:
            figures.set_cover_size = pairs.get("set_cover_count")
            figures.set_cover_exceeds_budget = pairs.get("set_cover_exceeds_budget")
            if figures.adversaries_killed_by_lite is None and "covered_count" in pairs:
                figures.adversaries_killed_by_lite = pairs["covered_count"]
                if figures.adversaries_killing is None:
                    figures.adversaries_killing = pairs.get("universe_size")
        rejects = reduction.reject_inputs
        if isinstance(rejects.get("stage_counts"), dict):
            figures.reject_stages = dict(rejects["stage_counts"])


def _task_ids(
    run_dir: Path,
    manifest: dict[str, Any],
    suites: dict[str, list[Task]],
    counts: dict[str, list[TaskCounts]],
) -> list[str]:
    from veriscale.backends.datasets import natural_key

    ids: set[str] = set()
    listed = manifest.get("tasks")
    if isinstance(listed, list):
        ids.update(str(t) for t in listed)
    for tasks in suites.values():
        ids.update(t.id for t in tasks)
    for cs in counts.values():
        ids.update(c.task for c in cs)
    tasks_dir = Path(run_dir) / "tasks"
    if tasks_dir.is_dir():
        ids.update(d.name for d in tasks_dir.iterdir() if d.is_dir())
    return sorted(ids, key=natural_key)


def collect(run_dir: Path) -> RunReport:
    """Read everything the report needs from ``run_dir``; never raises for missing pieces."""
    run_dir = Path(run_dir)
    manifest = _read_json(run_dir / "manifest.json")
    if not isinstance(manifest, dict):
        manifest = {}
    loaded = load_suites(run_dir)
    suites = loaded.tasks
    by_suite = {name: {t.id: t for t in tasks} for name, tasks in suites.items()}
    counts = {name: {c.task: c for c in cs} for name, cs in loaded.counts.items()}
    figures: list[TaskFigures] = []
    for task_id in _task_ids(run_dir, manifest, suites, loaded.counts):
        fig = TaskFigures(task_id)
        for name, by_task in counts.items():
            if task_id in by_task:
                fig.volumes[name] = _as_dict(by_task[task_id])
        adversary_figures(
            fig, run_dir, by_suite.get("plus", {}).get(task_id),
            by_suite.get("lite", {}).get(task_id),
        )
        figures.append(fig)
    table1 = {name: suite_stats(cs) for name, cs in loaded.counts.items()}
    return RunReport(run_dir, manifest, suites, loaded.issues, figures, table1)


# --------------------------------------------------------------------------- rendering


def _md_table(header: list[str], rows: list[list[str]], align: str | None = None) -> list[str]:
    align = align or "l" + "r" * (len(header) - 1)
    marks = [":--" if a == "l" else "--:" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return [*lines, ""]


def _cell(text: str, limit: int = 160) -> str:
    """``text`` as one markdown table cell: one line, pipes escaped, cut short."""
    line = " ".join(text.split()).replace("|", "\\|")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _num(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _flatten(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(data, dict):
        out: list[tuple[str, Any]] = []
        for key, value in data.items():
            out.extend(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(data, list):
        return [(prefix, json.dumps(data, ensure_ascii=False))]
    return [(prefix, data)]


def render_table1(report: RunReport) -> list[str]:
    lines = ["## Table 1: test-suite volumes", ""]
    if not report.table1:
        return [*lines, NOT_AVAILABLE + ": no suite (original/, plus/, lite/) could be loaded.", ""]
    rows = []
    for name in SUITES:
        if name not in report.table1:
            rows.append([SUITE_TITLES[name]] + ["not available"] * len(METRICS))
            continue
        mult = report.multipliers(name)
        row = [f"{SUITE_TITLES[name]} ({report.table1[name]['tasks']} tasks)"]
        row += [volume_text(report.table1[name][m], mult.get(m), bool(mult)) for m in METRICS]
        rows.append(row)
    lines += _md_table(["Dataset"] + [METRIC_TITLES[m] for m in METRICS], rows)
    lines += ["Mean (min–max) per task; multipliers are ratios of means over the original.", ""]
    totals = []
    for name in SUITES:
        if name in report.table1:
            totals.append([SUITE_TITLES[name]]
                          + [_num(report.table1[name][m]["total"]) for m in METRICS])
    if totals:
        lines += _md_table(["Totals"] + [METRIC_TITLES[m] for m in METRICS], totals)
    return lines


def render_tasks(report: RunReport) -> list[str]:
    lines = ["## Per-task figures", ""]
    if not report.tasks:
        return [*lines, NOT_AVAILABLE + ": no tasks found.", ""]

    def trio(fig: TaskFigures, metric: str) -> str:
        return " / ".join(_num(fig.volumes.get(s, {}).get(metric)) for s in SUITES)

    rows = []
    for fig in report.tasks:
        cov = fig.lite_kill_coverage
        rows.append([
            fig.task_id, trio(fig, "pairs"), trio(fig, "unexpected_outputs"),
            trio(fig, "unexpected_inputs"),
            " / ".join(_num(x) for x in (fig.adversaries_tried, fig.adversaries_compiled,
                                         fig.adversaries_killing)),
            "—" if cov is None else f"{100 * cov:.1f}% ({fig.adversaries_killed_by_lite}"
                                    f"/{fig.adversaries_killing})",
        ])
    lines += _md_table(
        ["Task", "Pairs O / P / L", "Unexp. outputs O / P / L", "Unexp. inputs O / P / L",
         "Adversaries tried / compiled / killing", "Lite kill coverage"],
        rows,
    )
    lines += ["O / P / L = original / Plus / Lite; — = not available. Lite kill coverage = "
              "adversaries killed by Lite / adversaries killed by Plus.", ""]
    return lines


def render_reduction(report: RunReport) -> list[str]:
    lines = ["## Reduction", ""]
    figs = [f for f in report.tasks if f.set_cover_size is not None or f.reject_stages]
    if not figs:
        return [*lines, NOT_AVAILABLE + ": no reduction logs (tasks/<id>/reduction.json).", ""]
    over = [f.task_id for f in figs if f.set_cover_exceeds_budget]
    stage_names = sorted({s for f in figs for s in (f.reject_stages or {})})
    rows = [[f.task_id, _num(f.set_cover_size), "yes" if f.set_cover_exceeds_budget else "no"]
            + [_num((f.reject_stages or {}).get(s, 0)) for s in stage_names] for f in figs]
    lines += _md_table(["Task", "Set-cover pairs", "Cover exceeds budget"]
                       + [f"rejects: {s}" for s in stage_names], rows)
    lines += [f"Tasks whose set cover alone exceeds the pair budget: {len(over)}"
              + (f" ({', '.join(over)})" if over else "") + ".", ""]
    return lines


def render_table2(report: RunReport) -> list[str]:
    """The paper's Table 2 for this run: evaluation time of the ground truth per suite."""
    lines = ["## Table 2: evaluation time", ""]
    timing = report.manifest.get("evaluation_time")
    if not isinstance(timing, dict) or not timing:
        return [*lines, NOT_AVAILABLE + ": the run did not time an evaluation "
                "(config `report.time_evaluation`).", ""]
    base = (timing.get("original") or {}).get("seconds")
    rows = []
    for name, t in timing.items():
        if not isinstance(t, dict):
            continue
        secs = t.get("seconds")
        ratio = f"×{secs / base:.2f}" if base and isinstance(secs, int | float) else "—"
        rates = t.get("gt_pass_rate") if isinstance(t.get("gt_pass_rate"), dict) else {}
        all_pass = all(v == 1.0 for v in rates.values()) if rates else None
        rows.append([name, _num(t.get("tasks")), _num(secs), ratio,
                     _num(t.get("code_seconds")), _num(t.get("spec_seconds")),
                     {True: "yes", False: "NO", None: "—"}[all_pass]])
    lines += _md_table(["Suite", "Tasks", "Seconds", "vs original", "Code s", "Spec s",
                        "GT passes every metric"], rows)
    lines += ["The ground-truth code and specification of every task, scored on each suite "
              "with VERINA's metrics (wall time, one run).", ""]
    return lines


def render_coverage(report: RunReport) -> list[str]:
    """Line and branch coverage of the reference code by each suite's tests."""
    lines = ["## Code coverage of the reference", ""]
    cov = report.manifest.get("code_coverage")
    if not isinstance(cov, dict) or not cov:
        return [*lines, NOT_AVAILABLE + ": the run did not measure it.", ""]
    if not cov.get("available"):
        return [*lines, f"{NOT_AVAILABLE}: {cov.get('reason') or 'not measurable here'}.", ""]
    rows = []
    for name, c in (cov.get("suites") or {}).items():
        if not isinstance(c, dict):
            continue
        if "error" in c:
            rows.append([name, "—", "—", "—", "—", f"not measured: {c['error']}"])
            continue
        share = c.get("line_coverage"), c.get("branch_coverage")
        rows.append([name, f"{_num(c.get('tasks_measured'))}/{_num(c.get('tasks'))}",
                     f"{_num(c.get('lines_covered'))}/{_num(c.get('lines_total'))}"
                     + (f" ({100 * share[0]:.1f}%)" if share[0] is not None else ""),
                     f"{_num(c.get('branches_covered'))}/{_num(c.get('branches_total'))}"
                     + (f" ({100 * share[1]:.1f}%)" if share[1] is not None else ""),
                     _num(c.get("tasks_fully_covered")), "; ".join(c.get("not_available") or [])])
    lines += _md_table(["Suite", "Tasks measured", "Lines", "Branches", "Fully covered",
                        "Not available"], rows)
    lines += ["Statements and branches of each task's reference and the functions it names, "
              "run by the inputs of the suite's tests (coverage.py, in the sandbox). "
              "`veriscale coverage SUITE... --per-task` lists what each task misses.", ""]
    return lines


def render_timings(report: RunReport) -> list[str]:
    lines = ["## Wall time per stage", ""]
    timings = report.manifest.get("timings")
    if not isinstance(timings, dict) or not timings:
        return [*lines, NOT_AVAILABLE + ": no timings in manifest.json.", ""]
    stages = {k: float(v) for k, v in timings.items() if isinstance(v, int | float)}
    total = stages.get("total") or sum(v for k, v in stages.items() if k != "total")
    # Oracle processes (Lean files) and checks per stage: what a prover's process
    # starts cost, per task.
    oracle = report.manifest.get("backend_stats_by_stage")
    oracle = oracle if isinstance(oracle, dict) else {}
    n_tasks = len(report.manifest.get("tasks") or []) or None
    computed = report.manifest.get("timings_computed")
    computed = computed if isinstance(computed, dict) else {}
    # a resumed run: beside this run's seconds, what each stage cost when computed
    resumed = any(isinstance(computed.get(k), int | float) and abs(float(computed[k]) - v) > 0.005
                  for k, v in stages.items() if k != "total")  # its total: the stages' sum
    rows = []
    for k, v in stages.items():
        was = computed.get(k)
        row = [k, f"{v:.2f}"]
        if resumed:
            row.append(f"{float(was):.2f}" if isinstance(was, int | float) else "")
        row.append(f"{100 * v / total:.1f}%" if total and k != "total" else "")
        if k == "total":
            parts = [o for o in oracle.values() if isinstance(o, dict)]
            got = {f: sum(float(o.get(f) or 0) for o in parts)
                   for f in ("processes", "checks")} if parts else {}
        else:
            got = oracle.get(k) if isinstance(oracle.get(k), dict) else {}
        procs, checks = got.get("processes"), got.get("checks")
        row += [f"{int(procs)}" if procs is not None else "",
                f"{procs / n_tasks:.2f}" if procs is not None and n_tasks else "",
                f"{int(checks)}" if checks is not None else ""]
        rows.append(row)
    lines += _md_table(["Stage", "Seconds (this run)",
                        *(["Seconds when computed"] if resumed else []), "Share",
                        "Oracle processes", "per task", "Oracle checks"], rows)
    return lines


def render_kv(title: str, data: Any, missing: str) -> list[str]:
    lines = [f"## {title}", ""]
    items = _flatten(data) if isinstance(data, dict) else []
    if not items:
        return [*lines, f"{NOT_AVAILABLE}: {missing}", ""]
    lines += _md_table(["Key", "Value"], [[k, _num(v)] for k, v in items], "lr")
    return lines


def render_counts(report: RunReport) -> list[str]:
    lines = ["## Stage counts", ""]
    counts = report.manifest.get("counts")
    if not isinstance(counts, dict) or not counts:
        return [*lines, NOT_AVAILABLE + ": no counts in manifest.json.", ""]
    oracle = report.manifest.get("backend_stats_by_stage")
    oracle = oracle if isinstance(oracle, dict) else {}
    rows = []
    for stage, values in counts.items():
        if isinstance(values, dict):
            # the oracle's unknown verdicts by cause ("unknown gt postcondition: ..."):
            # the stage's own counts cannot say why a verdict is unknown
            extra = oracle.get(stage) if isinstance(oracle.get(stage), dict) else {}
            values = {**values, **{k: v for k, v in extra.items()
                                   if str(k).startswith(VERDICT_UNKNOWN_PREFIX)}}
            rows.append([stage, ", ".join(f"{k}={_num(v)}" for k, v in values.items())])
    lines += _md_table(["Stage", "Totals over tasks"], rows, "ll")
    return lines


def render_header(report: RunReport) -> list[str]:
    m = report.manifest
    cfg = m.get("config") if isinstance(m.get("config"), dict) else {}
    versions = m.get("versions") if isinstance(m.get("versions"), dict) else {}
    errors = m.get("errors") if isinstance(m.get("errors"), dict) else {}
    lines = ["# VeriScale run report", "", f"- Run directory: `{report.run_dir}`"]
    if not m:
        lines.append(f"- Manifest: {NOT_AVAILABLE} (no readable manifest.json)")
    else:
        lines += [
            f"- Benchmark: `{m.get('benchmark', '?')}`",
            f"- Seed: {m.get('seed', cfg.get('seed', '?'))}; backend: {cfg.get('backend', '?')}",
            "- Versions: " + (", ".join(f"{k} {v}" for k, v in versions.items()) or "?"),
            f"- Tasks: {len(report.tasks)}; failed tasks: {len(errors)}; degraded tasks: "
            f"{len(m.get('degraded') or {})}",
        ]
    for name, n in report.load_issue_counts.items():
        if n:
            lines.append(f"- Load issues in `{name}/`: {n}")
    lines.append("")
    degraded = m.get("degraded") if isinstance(m.get("degraded"), dict) else {}
    if degraded:
        lines += ["### Degraded tasks", "",
                  "Suites written but weaker than they should be (pipeline/degraded.py).", ""]
        lines += _md_table(["Task", "Why"],
                           [[t, "; ".join(map(str, c)).replace("|", "\\|")]
                            for t, c in sorted(degraded.items()) if isinstance(c, list)], "ll")
    contradicted = m.get("contradicted_rows") if isinstance(m.get("contradicted_rows"), dict) \
        else {}
    if contradicted:
        lines += ["### Original rows the ground truth contradicts", "",
                  "Left out of Plus and Lite: a suite that kept them would fail its own ground "
                  "truth.", ""]
        lines += _md_table(["Task", "Input", "Why"],
                           [[t, _cell(json.dumps(r.get("input"), ensure_ascii=False)),
                             _cell(str(r.get("why", "")))]
                            for t, rows in sorted(contradicted.items()) if isinstance(rows, list)
                            for r in rows if isinstance(r, dict)], "lll")
    if errors:
        lines += ["### Failed tasks", ""]
        lines += _md_table(
            ["Task", "Stage", "Error"],
            [[t, str(e.get("stage", "?")), str(e.get("error", "?")).replace("|", "\\|")]
             for t, e in errors.items() if isinstance(e, dict)], "lll")
    return lines


def render_audit(report: RunReport) -> list[str]:
    """The ground-truth audit (``audit.json``, see pipeline/audit.py)."""
    data = _read_json(report.run_dir / "audit.json")
    if not isinstance(data, dict):
        return []
    lines = ["## Ground-truth audit", "",
             f"Tasks flagged: {data.get('tasks_flagged', 0)} of {data.get('tasks', '?')}, by "
             "kind: " + (", ".join(f"{k} {n}" for k, n in
                                   (data.get("tasks_flagged_by_kind") or {}).items()) or "none")
             + ". Only definite verdicts make a finding; tasks whose description allows "
             "several answers come last.", ""]
    rows = [[_cell(str(f.get("task"))), _cell(str(f.get("kind"))), str(f.get("count")),
             "yes" if f.get("several_answers") else "",
             _cell(json.dumps(f.get("witness"), ensure_ascii=False), 200)]
            for f in data.get("findings") or [] if isinstance(f, dict)]
    if rows:
        lines += _md_table(["Task", "Kind", "Count", "Several answers", "Smallest witness"],
                           rows, "llrll")
    costs = data.get("costs") or {}
    if costs:
        lines += ["Reference runs that ran out of a budget (a cost, not a defect): "
                  + ", ".join(f"{t} ({', '.join(f'{c} {n}' for c, n in cs.items())})"
                              for t, cs in sorted(costs.items())), ""]
    return lines


def render_markdown(report: RunReport) -> str:
    lines = render_header(report)
    lines += render_table1(report)
    if report.plots:
        lines += ["## Plots", ""]
        lines += [*(f"![{p.stem}]({p.name})" for p in report.plots), ""]
    lines += render_table2(report)
    lines += render_coverage(report)
    lines += render_tasks(report)
    lines += render_reduction(report)
    lines += render_audit(report)
    lines += render_timings(report)
    lines += render_counts(report)
    lines += render_kv("Backend", report.manifest.get("backend_stats"),
                       "no backend_stats in manifest.json.")
    lines += render_kv("LLM usage", report.manifest.get("llm_usage"),
                       "no llm_usage in manifest.json (offline provider, or not recorded).")
    from veriscale.llm.report import render_llm

    lines += render_llm(report.run_dir, report.manifest, [t.task_id for t in report.tasks],
                        read_artifact, _md_table)
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- writing
