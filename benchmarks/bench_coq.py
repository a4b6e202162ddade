"""Coq backend figures on VERINA's Coq track: checks, coqc processes, wall time.

    python benchmarks/bench_coq.py [DATASET_DIR] [--tasks ID,...] [--workers N]

Prints agreed / disagreed / unknown checks of ``verify``, coqc processes, files,
reruns (a file resumed after a failing check) and seconds. Needs ``coqc``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from veriscale.backends.coq.backend import CoqBackend
from veriscale.backends.datasets import load_benchmark
from veriscale.evaluation.verify import verify_tasks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", nargs="?",
                    default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"
                                / "verina-coq"))
    ap.add_argument("--tasks", default="")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    ids = [t for t in args.tasks.split(",") if t] or None
    tasks, _ = load_benchmark(Path(args.dataset), ids)
    backend = CoqBackend(workers=args.workers)
    start = time.perf_counter()
    report = verify_tasks(backend, tasks)
    wall = time.perf_counter() - start
    totals = {k: sum(getattr(c, k) for c in report.checks.values())
              for k in ("agree", "disagree", "unknown")}
    checks = sum(totals.values())
    print(f"tasks {len(tasks)}  checks {checks}  agreed {totals['agree']}  "
          f"disagreed {totals['disagree']}  unknown {totals['unknown']}")
    print(f"coqc processes {backend.stats.processes}  files {backend.stats.extra['coqc_files']}  "
          f"reruns {backend.stats.extra['reruns']}  wall {wall:.1f} s  "
          f"checks per process {checks / max(1, backend.stats.processes):.0f}")
    for f in report.findings:
        print(f"disagree {f.task}: {f.kind}: {f.item}: {f.detail}")


if __name__ == "__main__":
    main()
