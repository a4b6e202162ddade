"""Publish a VERINA run on Lean: a Markdown page and the same figures as JSON, written
from the run directory (and the JSON of ``verify`` runs, if given), never by hand.

    veriscale run ../shared/data/verina --out RUN
    veriscale verify RUN/plus --backend lean --json > RUN/verify-plus.json
    veriscale verify RUN/lite --backend lean --json > RUN/verify-lite.json
    python3 benchmarks/verina_lean_results.py RUN --verify RUN/verify-plus.json \\
        --verify RUN/verify-lite.json --out docs/results/verina-lean

writes ``docs/results/verina-lean.md`` and ``docs/results/verina-lean.json``: tasks,
wall seconds and Lean processes per stage, Table 1 beside the paper's, expected
inputs and reference failures, pairs and GT-postcondition unknowns, adversary
outputs kept and discarded as GT-unknown, unknowns by cause and stage, and the
disagreements and unknowns of each ``verify``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from veriscale.backends.base import prover_processes
from veriscale.backends.causes import VERDICT_UNKNOWN_PREFIX
from veriscale.report.stats import MEASURES, dataset_counts, multipliers, suite_stats

PAPER_TABLE1 = {  # the paper's Table 1, mean per task (VERINA → VerinaPlus → VerinaLite)
    "multiplier_plus": {"pairs": 62.8},
    "multiplier_lite": {"pairs": 8.9},
}
AUTHORS_RELEASE = {  # the authors' released suites, mean per task (shared/reference/upstream-facts.md)
    "plus": {"pairs": 370.07, "unexpected_outputs": 1114.01, "unexpected_inputs": 119.00},
    "lite": {"pairs": 52.34, "unexpected_outputs": 202.35, "unexpected_inputs": 15.80},
}


def _stage_counts(run: Path, stage: str) -> dict[str, dict[str, int]]:
    """Per task, the ``counts`` of one stage record (tasks without the record: absent)."""
    out: dict[str, dict[str, int]] = {}
    for record in sorted((run / "tasks").glob(f"*/{stage}.json")):
        data = json.loads(record.read_text())
        counts = (data.get("data") or {}).get("counts") or {}
        out[record.parent.name] = {k: v for k, v in counts.items() if isinstance(v, int)}
    return out


def _total(per_task: dict[str, dict[str, int]], key: str) -> int:
    return sum(c.get(key, 0) for c in per_task.values())


def _causes(per_task: dict[str, dict[str, int]], prefix: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for counts in per_task.values():
        for k, v in counts.items():
            if k.startswith(prefix + ": "):
                cause = k[len(prefix) + 2:]
                out[cause] = out.get(cause, 0) + v
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def _share(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def unknowns(run: Path) -> dict[str, Any]:
    """The issue's ratios from the stage records (a run still going has some): reference
    failures over expected inputs, GT-postcondition unknowns over the pairs they were
    asked of, adversary outputs discarded as GT-unknown over those the GT decided or not,
    each with its causes and the tasks it was counted over."""
    outputs, unexpected = _stage_counts(run, "outputs"), _stage_counts(run, "unexpected")
    expected = _total(outputs, "expected_inputs")
    failures = _total(outputs, "failures")
    pairs = _total(outputs, "pairs")
    gt_unknown = _total(outputs, "gt_postcondition_unknown")
    asked = pairs + _total(outputs, "gt_rejected")  # the GT postcondition's pairs
    kept = _total(unexpected, "unexpected_kept")
    discarded = _total(unexpected, "discarded_gt_unknown")
    judged = kept + discarded + _total(unexpected, "discarded_gt_accepts") \
        + _total(unexpected, "discarded_no_flawed_acceptance")
    return {
        "tasks_with_outputs": len(outputs), "tasks_with_unexpected": len(unexpected),
        "expected_inputs": expected, "reference_failures": failures,
        "reference_failures_percent": _share(failures, expected),
        "reference_failures_by_cause": _causes(outputs, "failed"),
        "pairs": pairs, "gt_unknown_pairs": gt_unknown,
        "gt_unknown_pairs_percent": _share(gt_unknown, asked),
        "gt_unknown_pairs_by_cause": _causes(outputs, "gt_postcondition_unknown"),
        "adversary_outputs_kept": kept, "adversary_outputs_discarded_gt_unknown": discarded,
        "adversary_outputs_gt_unknown_percent": _share(discarded, judged),
        "adversary_outputs_gt_unknown_by_cause": _causes(unexpected, "discarded_gt_unknown"),
    }


def figures(run: Path, verifies: list[Path]) -> dict[str, Any]:
    path = run / "manifest.json"
    manifest = json.loads(path.read_text()) if path.exists() else {}  # a run still going
    stages = manifest.get("backend_stats_by_stage", {})
    timings = manifest.get("timings", {})
    suites = {name: suite_stats(dataset_counts(run / name))
              for name in ("original", "plus", "lite") if (run / name).is_dir()}
    unknowns_by_stage = {stage: {k[len(VERDICT_UNKNOWN_PREFIX):]: v for k, v in st.items()
                                 if k.startswith(VERDICT_UNKNOWN_PREFIX) and v}
                         for stage, st in stages.items()}
    out: dict[str, Any] = {
        "tasks": len(manifest.get("tasks", [])),
        "failed_tasks": manifest.get("errors", {}),
        "wall_seconds": timings.get("total"),
        # stages whose records came from an earlier run: the figures above are then
        # the last run's, not the whole run's
        "resumed_stages": sorted(k for k, v in (manifest.get("resumed_tasks") or {}).items()
                                 if v),
        "lean_processes": _processes(manifest.get("backend_stats", {})),
        "lean_files": manifest.get("backend_stats", {}).get("processes"),
        "lean_seconds": manifest.get("backend_stats", {}).get("seconds"),
        "checks": manifest.get("backend_stats", {}).get("checks"),
        "mode": manifest.get("backend_stats", {}).get("mode"),
        "stages": {stage: {"seconds": timings.get(stage),
                           "processes": st.get("prover processes", st.get("processes")),
                           "files": st.get("processes"), "checks": st.get("checks"),
                           **{k: v for k, v in st.items() if k.startswith("wall seconds")}}
                   for stage, st in stages.items()},
        "counts": manifest.get("counts", {}),
        "unknowns_by_stage": unknowns_by_stage,
        "unknowns": unknowns(run),
        "table1": {name: {m: s[m]["mean"] for m in MEASURES} for name, s in suites.items()},
        "verify": {},
    }
    if "original" in suites:
        for name in ("plus", "lite"):
            if name in suites:
                out["table1"][f"multiplier_{name}"] = multipliers(suites["original"],
                                                                  suites[name])
    for path in verifies:
        v = json.loads(path.read_text())
        out["verify"][path.stem] = {"disagreements": len(v.get("disagreements", [])),
                                    "checks": v.get("checks"),
                                    "unknown_causes": v.get("unknown_causes"),
                                    "oracle_processes": v.get("oracle_processes"),
                                    "seconds": v.get("seconds")}
    return out


def _processes(stats: dict[str, Any]) -> Any:
    """Lean processes: files, less those a Lean session served, plus the sessions' starts."""
    started = prover_processes(stats.get("processes", 0), stats)
    return stats.get("processes") if started is None else started


def _num(x: Any) -> str:
    return "-" if x is None else (f"{x:,.2f}" if isinstance(x, float) else f"{x:,}")


def page(f: dict[str, Any]) -> str:
    lines = [
        "# VERINA on Lean: VerinaPlus and VerinaLite, as built by VeriScale",
        "",
        "Written by `benchmarks/verina_lean_results.py` from the run directory.",
        "",
        f"- tasks: {f['tasks']} (failed: {len(f['failed_tasks'])}); evaluation mode: "
        f"{f['mode']}",
        f"- wall time: {_num(f['wall_seconds'])} s; Lean processes: "
        f"{_num(f['lean_processes'])}; Lean seconds: {_num(f['lean_seconds'])}; checks: "
        f"{_num(f['checks'])}",
        *([f"- **resumed**: the records of {', '.join(f['resumed_stages'])} (some or all "
           "tasks) came from earlier runs of the same run directory, so the wall time, "
           "processes, seconds and checks above are the last run's only, not the "
           "whole run's"] if f.get("resumed_stages") else []),
        "",
        "## Table 1 (mean per task)",
        "",
        "| suite | pairs | unexpected outputs | unexpected inputs |",
        "|---|---|---|---|",
    ]
    t1 = f["table1"]
    for name in ("original", "plus", "lite"):
        if name in t1:
            lines.append(f"| {name} | " + " | ".join(_num(t1[name][m]) for m in MEASURES) + " |")
    for name in ("plus", "lite"):
        mult = t1.get(f"multiplier_{name}")
        if mult:
            paper = PAPER_TABLE1[f"multiplier_{name}"]["pairs"]
            lines.append(f"| ×{name} (paper: pairs ×{paper}) | "
                         + " | ".join("×" + _num(mult[m]) for m in MEASURES) + " |")
    for name, means in AUTHORS_RELEASE.items():
        lines.append(f"| the authors' released {name} | "
                     + " | ".join(_num(means[m]) for m in MEASURES) + " |")
    lines += ["", "## Stages", "", "| stage | seconds | Lean processes | Lean files | checks |",
              "|---|---|---|---|---|"]
    for stage, st in f["stages"].items():
        lines.append(f"| {stage} | {_num(st['seconds'])} | {_num(st['processes'])} | "
                     f"{_num(st['files'])} | {_num(st['checks'])} |")
    u = f["unknowns"]
    lines += [
        "", "## What stayed unknown (aims: reference failures at most 3 %, GT-postcondition "
        "unknowns at most 10 %)", "",
        f"- reference failures: {_num(u['reference_failures'])} of "
        f"{_num(u['expected_inputs'])} expected inputs ({_num(u['reference_failures_percent'])} "
        f"%), over {u['tasks_with_outputs']} tasks: "
        + ", ".join(f"{k} {v:,}" for k, v in u["reference_failures_by_cause"].items()),
        f"- GT-postcondition unknown pairs: {_num(u['gt_unknown_pairs'])} "
        f"({_num(u['gt_unknown_pairs_percent'])} %): "
        + ", ".join(f"{k} {v:,}" for k, v in u["gt_unknown_pairs_by_cause"].items()),
        f"- adversary outputs kept {_num(u['adversary_outputs_kept'])}, discarded as "
        f"GT-unknown {_num(u['adversary_outputs_discarded_gt_unknown'])} "
        f"({_num(u['adversary_outputs_gt_unknown_percent'])} %), over "
        f"{u['tasks_with_unexpected']} tasks: "
        + ", ".join(f"{k} {v:,}" for k, v in u["adversary_outputs_gt_unknown_by_cause"].items()),
    ]
    lines += ["", "## Unknown verdicts by stage and cause", ""]
    for stage, causes in f["unknowns_by_stage"].items():
        if causes:
            lines.append(f"- {stage}: " + ", ".join(f"{k} {v:,}" for k, v in causes.items()))
    if f["verify"]:
        lines += ["", "## verify", ""]
        for name, v in f["verify"].items():
            checks = v.get("checks") or {}
            agree = sum(c.get("agree", 0) for c in checks.values())
            unknown = sum(c.get("unknown", 0) for c in checks.values())
            lines.append(f"- {name}: {v['disagreements']} disagreements, {agree:,} checks "
                         f"agree, {unknown:,} unknown ({_num(v.get('seconds'))} s, "
                         f"{_num(v.get('oracle_processes'))} Lean processes); unknown causes "
                         f"{json.dumps(v['unknown_causes'])}")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--verify", type=Path, action="append", default=[])
    ap.add_argument("--out", type=Path, default=Path("docs/results/verina-lean"))
    args = ap.parse_args()
    f = figures(args.run, args.verify)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(f, indent=2, sort_keys=True) + "\n")
    args.out.with_suffix(".md").write_text(page(f))
    print(page(f))


if __name__ == "__main__":
    main()
