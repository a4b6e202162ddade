"""Does the reference reproduce every expected output, on WASM Lean? Two ways at once.

Usage: python benchmarks/bench_lean_reference.py [--data DIR] [--tasks a,b] [--runner wasm]
       [--workers N] [--tasks-per-file N] [--json OUT]

For every test of every task, in one batched oracle call (so one set of Lean
files for both): the reference's value by ``#reduce`` compared here (``run``,
how ``verify`` checked it before), and VERINA's code test ``F args == expected``
in Lean (``test_outputs``, how ``verify`` checks it now), whose stuck answers
(code over ``Array`` behind well-founded recursion) go to the kernel round
(``decide +kernel``). Prints agree / disagree / unknown for each way, the
unknowns by cause, the references recovered, the kernel round's figures by kind
of check, the compatibility names tasks needed, Lean processes and wall time.
No oracle cache: a fresh measurement.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from veriscale.backends.causes import unknown_cause
from veriscale.backends.datasets import load_benchmark
from veriscale.backends.lean.backend import LeanBackend
from veriscale.backends.lean.sections import lean_sections
from veriscale.evaluation.verify import AGREE, DISAGREE, UNKNOWN, reference_verdict

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "verina"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--tasks", default="")
    ap.add_argument("--runner", default="wasm")
    ap.add_argument("--workers", type=int, default=None, help="Lean files at a time")
    ap.add_argument("--tasks-per-file", type=int, default=None)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    ids = [t for t in args.tasks.split(",") if t] or None
    tasks, issues = load_benchmark(args.data, ids)
    tasks = [t for t in tasks if lean_sections(t) is not None and t.tests]
    backend = LeanBackend(args.runner, workers=args.workers,
                          tasks_per_file=args.tasks_per_file)
    start = time.perf_counter()
    requests = ([("run", (t, None, [c.input for c in t.tests])) for t in tasks]
                + [("test_outputs", (t, None, [(c.input, c.expected) for c in t.tests]))
                   for t in tasks])
    answers = backend.evaluate_many(requests)
    wall = time.perf_counter() - start
    n = len(tasks)
    ways: dict[str, Counter[str]] = {"value (run)": Counter(), "== in Lean": Counter()}
    causes: dict[str, Counter[str]] = {k: Counter() for k in ways}
    recovered: list[str] = []
    lost: list[str] = []
    for i, task in enumerate(tasks):
        ret = task.signature.return_type
        for j, case in enumerate(task.tests):
            got = {}
            for way, outs, compared in (("value (run)", answers[i], False),
                                        ("== in Lean", answers[n + i], True)):
                verdict, why = reference_verdict(ret, outs[j], case.expected, compared)
                ways[way][verdict] += 1
                if verdict == UNKNOWN:
                    causes[way][unknown_cause(why)] += 1
                got[way] = verdict
            if got["value (run)"] == UNKNOWN and got["== in Lean"] != UNKNOWN:
                recovered.append(f"{task.id}[{j}]")
            if got["value (run)"] != UNKNOWN and got["== in Lean"] == UNKNOWN:
                lost.append(f"{task.id}[{j}]")
    extra = backend.stats.extra
    result = {
        "tasks": n, "load_issues": len(issues), "tests": sum(len(t.tests) for t in tasks),
        "ways": {k: dict(v) for k, v in ways.items()},
        "unknown_causes": {k: dict(v) for k, v in causes.items()},
        "recovered": len(recovered), "recovered_tasks": sorted({r.split("[")[0]
                                                                for r in recovered}),
        "lost": lost,
        "kernel_decide": extra.get("kernel_decide"),
        "kernel_decide_by_check": extra.get("kernel_decide_by_check"),
        "compat": extra.get("compat", {}),
        "lean_processes": backend.stats.processes, "checks": backend.stats.checks,
        "timeouts": extra.get("timeouts"), "crashes": extra.get("crashes"),
        "wall_seconds": round(wall, 1),
    }
    for way, c in ways.items():
        print(f"{way:<14} agree {c[AGREE]:>5}  disagree {c[DISAGREE]:>4}  unknown {c[UNKNOWN]:>4}"
              f"   unknown causes: {dict(causes[way])}")
    print(f"references recovered by == + kernel round: {len(recovered)} "
          f"(tasks {result['recovered_tasks']}); lost: {len(lost)}")
    print(f"kernel round: {result['kernel_decide']} by check {result['kernel_decide_by_check']}")
    print(f"compatibility names: {result['compat']}")
    print(f"{n} tasks, {result['tests']} tests: {backend.stats.processes} Lean processes, "
          f"{backend.stats.checks} checks, {wall:.0f} s wall")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
