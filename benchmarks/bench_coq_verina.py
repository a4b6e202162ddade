"""VERINA's Coq track end to end: the figures of a ``veriscale run`` and its suites.

    python benchmarks/bench_coq_verina.py RUN_DIR [--verify] [--unknowns DATASET]
        [--evaluate] [--workers N]

Prints, from ``RUN_DIR/manifest.json`` of ``veriscale run DATASET --out RUN_DIR
--backend coq``: wall time, seconds per stage, coqc processes, checks and checks
per process per stage, files, reruns, checks skipped after timeouts, unknowns per
cause; Table 1 (original / Plus / Lite, with multipliers) next to the paper's
VERINA -> VerinaPlus -> VerinaLite figures; defects of ``validate`` on Plus and
Lite. ``--verify`` re-checks Plus and Lite against the ground truth (agreements,
disagreements named by task and row, unknowns per cause). ``--unknowns DATASET``
does the same for another dataset (the original benchmark). ``--evaluate``
scores the built-in code and spec mutants on original / Plus / Lite: detection
shares and evaluation seconds (the paper's Figure 5 and Table 2). Needs ``coqc``.
Oracle answers are never taken from a cache here: every figure is a fresh run.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from veriscale.backends.base import Label, Verdict
from veriscale.backends.causes import unknown_cause
from veriscale.backends.coq.backend import CoqBackend
from veriscale.backends.datasets import load_benchmark
from veriscale.report.stats import dataset_counts, multipliers, suite_stats
from veriscale.values.value import values_equal

# The paper's Table 1: mean (min-max) per task, multiplier over VERINA.
PAPER_TABLE1 = {
    "expected pairs": ("5.89 (2-13)", "370.07 (5-705) x62.83", "52.34 (5-61) x8.89"),
    "unexpected outputs": ("12.69 (2-34)", "1114.01 (15-2973) x87.79",
                           "202.35 (15-467) x15.95"),
    "unexpected inputs": ("0.65 (0-7)", "119.00 (0-684) x183.08", "15.80 (0-50) x24.31"),
}


def run_figures(run: Path) -> None:
    m = json.loads((run / "manifest.json").read_text())
    t = m["timings"]
    print(f"run {run}: {len(m['tasks'])} tasks, errors {len(m.get('errors') or {})}, "
          f"wall {t['total']:.0f} s ({t['total'] / 60:.1f} min)")
    for name, err in (m.get("errors") or {}).items():
        print(f"  lost task {name}: {err}")
    by_stage = m.get("backend_stats_by_stage", {})
    print(f"{'stage':<12}{'seconds':>9}{'coqc':>7}{'checks':>9}{'checks/coqc':>13}")
    for stage, secs in t.items():
        if stage == "total":
            continue
        b = by_stage.get(stage, {})
        procs, checks = int(b.get("processes", 0)), int(b.get("checks", 0))
        per = f"{checks / procs:.0f}" if procs else "-"
        print(f"{stage:<12}{secs:>9.1f}{procs:>7}{checks:>9}{per:>13}")
    bs = m.get("backend_stats", {})
    procs, checks = bs.get("processes", 0), bs.get("checks", 0)
    print(f"coqc processes {procs}, checks {checks}, processes per check "
          f"{procs / max(1, checks):.5f} ({checks / max(1, procs):.0f} checks each), files "
          f"{bs.get('coqc_files')}, reruns {bs.get('reruns')}, skipped after timeouts "
          f"{bs.get('skipped')}, coqc seconds {bs.get('seconds', 0):.0f}")
    unknown = {f"{stage}: {k}": v for stage, c in m.get("counts", {}).items()
               for k, v in c.items() if k.startswith("unknown:") or k == "discarded_gt_unknown"}
    print("unknowns during the run:", json.dumps(unknown))


def table1(run: Path) -> None:
    rows = {suite: suite_stats(dataset_counts(run / suite))
            for suite in ("original", "plus", "lite")}
    print("Table 1 (this run | paper):")
    mult = {s: multipliers(rows["original"], rows[s]) for s in ("plus", "lite")}
    for metric, paper in PAPER_TABLE1.items():
        key = {"expected pairs": "pairs", "unexpected outputs": "unexpected_outputs",
               "unexpected inputs": "unexpected_inputs"}[metric]
        cells = []
        for suite in ("original", "plus", "lite"):
            s = rows[suite][key]
            text = f"{s['mean'] or 0:.2f} ({s['min']}-{s['max']})"
            if suite != "original":
                x = mult[suite].get(key)
                text += f" x{x:.2f}" if x is not None else " x-"
            cells.append(text)
        print(f"  {metric:<19}" + " -> ".join(cells) + "   | " + " -> ".join(paper))


def validate(run: Path) -> None:
    from veriscale.backends.datasets import validate_dataset

    for suite in ("plus", "lite"):
        report = validate_dataset(run / suite)
        print(f"validate {suite}: {len(report.tasks)} tasks, {report.defect_count} defects, "
              f"{len(report.errors)} errors ({json.dumps(report.totals())})")


def verify(root: Path, workers: int) -> None:
    """verify's five checks with the reason of every unknown, by cause."""
    tasks, issues = load_benchmark(root)
    b = CoqBackend(workers=workers)
    start = time.perf_counter()
    cls = b.classify_many([(t, [x.input for x in t.tests] + list(t.reject_inputs))
                           for t in tasks])
    post = b.postcondition_reasons_many([
        (t, None, [(x.input, x.expected) for x in t.tests]
         + [(x.input, u) for x in t.tests for u in x.unexpected]) for t in tasks])
    runs = b.run_many([(t, None, [x.input for x in t.tests]) for t in tasks])
    wall = time.perf_counter() - start
    agree = disagree = 0
    causes: Counter[str] = Counter()
    where: dict[str, Counter[str]] = {}
    found: list[str] = []
    for t, c, p, r in zip(tasks, cls, post, runs, strict=True):
        n = len(t.tests)
        for i, x in enumerate(c):
            want = Label.EXPECTED if i < n else Label.UNEXPECTED
            if x.label == Label.UNKNOWN:
                cause = f"precondition: {unknown_cause(x.detail)}"
                causes[cause] += 1
                where.setdefault(cause, Counter())[t.id] += 1
            elif x.label == want:
                agree += 1
            else:
                disagree += 1
                where = f"test[{i}]" if i < n else f"reject[{i - n}]"
                found.append(f"{t.id} {where}: precondition says {x.label.value}")
        wants = [True] * n + [False] * (len(p) - n)
        for i, ((v, why), want) in enumerate(zip(p, wants, strict=True)):
            if v in (Verdict.TRUE, Verdict.FALSE):
                if (v is Verdict.TRUE) == want:
                    agree += 1
                else:
                    disagree += 1
                    found.append(f"{t.id} pair {i}: postcondition says {v.value}")
            else:
                cause = f"postcondition: {unknown_cause(why)}"
                causes[cause] += 1
                where.setdefault(cause, Counter())[t.id] += 1
        for i, (x, o) in enumerate(zip(t.tests, r, strict=True)):
            if o.ok:
                same = values_equal(t.signature.return_type, o.value, x.expected)
                agree += bool(same)
                if not same:
                    disagree += 1
                    found.append(f"{t.id} test[{i}]: reference gives {o.value!r}")
            elif o.inconclusive:
                cause = f"reference: {unknown_cause(o.error or '')}"
                causes[cause] += 1
                where.setdefault(cause, Counter())[t.id] += 1
            else:
                disagree += 1
                found.append(f"{t.id} test[{i}]: reference failed: {o.error}")
    checks = agree + disagree + sum(causes.values())
    print(f"verify {root}: {len(tasks)} tasks, {checks} checks, agree {agree}, disagree "
          f"{disagree}, unknown {sum(causes.values())}; coqc processes {b.stats.processes} "
          f"(reruns {b.stats.extra['reruns']}, skipped {b.stats.extra['skipped']}), "
          f"{wall:.0f} s; load issues {len(issues)}")
    for cause, k in causes.most_common():
        tasks_of = ", ".join(f"{tid} {n}" for tid, n in where[cause].most_common(6))
        print(f"  unknown {cause}: {k} ({tasks_of})")
    for f in found:
        print(f"  disagree {f}")


def evaluate(run: Path, workers: int) -> None:
    """The same built-in mutants on original / Plus / Lite (one ``evaluate`` call):
    detection shares and evaluation seconds per suite."""
    import subprocess
    import sys

    suites = [str(run / s) for s in ("original", "plus", "lite")]
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "veriscale.cli", "evaluate", *suites,
                          "--mutants", "--backend", "coq", "--json", "--no-cache",
                          "-o", f"workers={workers}"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if not out.stdout.strip():
        print(f"evaluate: exit {out.returncode}: {out.stderr[-800:]}")
        return
    data: Any = json.loads(out.stdout)
    print(f"evaluate --mutants: {wall:.0f} s wall, {data.get('mutants_generated')} mutants generated, "
          f"{len(data.get('mutants_discarded', []))} discarded as not compiling")
    for sp in data.get("suites", []):
        rates = {k: f"{100 * r['rate_definite']:.1f}% definite ({r['detected_definitely']}/"
                    f"{r['mutants']}; {r['detected']} with UNKNOWN)"
                 for k, r in (sp.get("rates") or {}).items() if r and r.get("mutants")}
        print(f"  {Path(sp['suite']).name:<9} {json.dumps(rates)}  seconds {sp.get('seconds')} "
              f"(code {sp.get('code_seconds')}, spec {sp.get('spec_seconds')}), "
              f"GT problems {len(sp.get('gt_problems', []))}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run", type=Path)
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--unknowns", type=Path, default=None)
    ap.add_argument("--evaluate", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    run_figures(args.run)
    table1(args.run)
    validate(args.run)
    if args.unknowns:
        verify(args.unknowns, args.workers)
    if args.verify:
        for suite in ("plus", "lite"):
            verify(args.run / suite, args.workers)
    if args.evaluate:
        evaluate(args.run, args.workers)


if __name__ == "__main__":
    main()
