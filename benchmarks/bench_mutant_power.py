"""Discriminative power at scale: seconds to score the built-in mutants on the
original suite and on Plus (and Lite), with the early stop and the timeout budget.

Usage: python benchmarks/bench_mutant_power.py RUN_DIR [--mutant-timeouts N ...]
       [--max-mutants 20] [--suites original,plus,lite] [--backend python]

RUN_DIR is a finished ``veriscale run`` directory (its ``original/``, ``plus/``
and ``lite/`` suites); e.g. ``veriscale run src/veriscale/examples/bundled --out R``.
For each ``--mutant-timeouts`` value (0 = every test of a looping mutant is run,
the behaviour before the budget), prints per suite: seconds, the ratio to the
original, the detected and definitely detected shares, and how many mutants the
budget cut. No oracle cache: every figure is a fresh measurement. The aim of
issue 14 is Plus within x3 of the original.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def measure(run_dir: Path, suites: list[str], backend_name: str, max_mutants: int,
            max_timeouts: int) -> dict[str, dict[str, float | int]]:
    from veriscale.backends.datasets import load_benchmark
    from veriscale.backends.registry import make_backend
    from veriscale.evaluation.power import discriminative_power

    loaded = []
    for name in suites:
        tasks, issues = load_benchmark(run_dir / name)
        if issues:
            print(f"{name}: {len(issues)} load issue(s), first: {issues[0]}")
        loaded.append((name, tasks))
    backend = make_backend(backend_name)
    start = time.perf_counter()
    try:
        report = discriminative_power(backend, loaded, max_per_kind=max_mutants, seed=0,
                                      max_timeouts=max_timeouts)
    finally:
        backend.close()
    wall = time.perf_counter() - start
    out: dict[str, dict[str, float | int]] = {}
    for sp in report.suites:
        rates = sp.rates()["all"]
        out[sp.suite] = {"seconds": round(sp.seconds, 1), "mutants": rates["mutants"],
                         "detected": rates["detected"],
                         "detected_definitely": rates["detected_definitely"],
                         "cut": sp.cut_by_timeouts, "gt_problems": len(sp.gt_problems)}
    out["_total"] = {"seconds": round(wall, 1), "generated": report.generated,
                     "discarded": len(report.discarded)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--mutant-timeouts", type=int, nargs="+", default=[2])
    ap.add_argument("--max-mutants", type=int, default=20)
    ap.add_argument("--suites", default="original,plus,lite")
    ap.add_argument("--backend", default="python")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    suites = [s for s in args.suites.split(",") if s]
    results = {}
    for limit in args.mutant_timeouts:
        got = measure(args.run_dir, suites, args.backend, args.max_mutants, limit)
        results[str(limit)] = got
        base = float(got[suites[0]]["seconds"]) or 1.0
        print(f"--mutant-timeouts {limit} (0 = run every test); total {got['_total']}")
        print(f"{'suite':<10}{'seconds':>9}{'x orig':>8}{'mutants':>9}{'detected':>10}"
              f"{'definite':>10}{'cut':>6}{'GT probl.':>10}")
        for name in suites:
            r = got[name]
            print(f"{name:<10}{r['seconds']:>9}{float(r['seconds']) / base:>8.2f}"
                  f"{r['mutants']:>9}{r['detected']:>10}{r['detected_definitely']:>10}"
                  f"{r['cut']:>6}{r['gt_problems']:>10}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
