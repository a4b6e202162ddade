"""Cost of Coq checks with and without shared literals, on VERINA-Coq's real work.

    python benchmarks/bench_coq_shared_literals.py RUN_DIR [--tasks N] [--inputs K]

``RUN_DIR`` is a ``veriscale run DATASET --backend coq`` directory. For the first
``N`` tasks (in id order) that have adversaries, every adversary of the run is
executed on ``K`` expected inputs of its Plus suite: the unexpected stage's
(expected input, adversary) cells, where each input recurs in every adversary's
unit. The same cells run twice, literals shared (the default) and each in place
(``share_literals=False``), in alternating order; the script prints coqc's wall
and CPU seconds for both, their ratio, and whether every answer is the same.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from veriscale.backends.base import Implementation
from veriscale.backends.coq.backend import CoqBackend
from veriscale.backends.datasets import load_benchmark


def cells(run: Path, n_tasks: int, k_inputs: int) -> list[tuple]:
    tasks, _ = load_benchmark(run / "plus")
    jobs = []
    for task in sorted(tasks, key=lambda t: t.id):
        path = run / "tasks" / task.id / "adversaries.json"
        if not path.exists():
            continue
        advs = [a for a in json.loads(path.read_text())["data"]["adversaries"]
                if not a.get("compile_error")]
        if not advs:
            continue
        inputs = [t.input for t in task.tests][:k_inputs]
        for a in advs:
            impl = Implementation(a["code"], imports=a.get("imports", ""), id=a["id"])
            jobs.append((task, impl, inputs))
        if len({j[0].id for j in jobs}) >= n_tasks:
            break
    return jobs


def measure(jobs: list[tuple], share: bool) -> tuple[float, float, list]:
    b = CoqBackend(share_literals=share)
    start = time.perf_counter()
    out = b.run_many(jobs)
    wall = time.perf_counter() - start
    cpu = b.stats.seconds
    b.close()
    answers = [[(o.ok, repr(o.value) if o.ok else o.failure_kind) for o in r] for r in out]
    return wall, cpu, answers


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run", type=Path)
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--inputs", type=int, default=200)
    args = ap.parse_args()
    jobs = cells(args.run, args.tasks, args.inputs)
    n = sum(len(j[2]) for j in jobs)
    print(f"{len({j[0].id for j in jobs})} tasks, {len(jobs)} adversaries, {n} cells")
    got = {}
    for share in (True, False, True, False):  # alternate: the machine's load drifts
        wall, cpu, answers = measure(jobs, share)
        w, c, a = got.get(share, (0.0, 0.0, answers))
        got[share] = (w + wall, c + cpu, a)
        assert a == answers, "the same backend gave other answers on a second run"
        print(f"  share_literals={share!s:<5} wall {wall:7.1f} s  coqc {cpu:7.1f} s")
    (ws, cs, a_s), (wp, cp, a_p) = got[True], got[False]
    same = a_s == a_p
    print(f"shared / in place: wall {ws / wp:.2f}, coqc seconds {cs / cp:.2f}; "
          f"answers identical: {same}")
    if not same:
        diff = sum(x != y for r, q in zip(a_s, a_p, strict=True)
                   for x, y in zip(r, q, strict=True))
        print(f"  {diff} answers differ")


if __name__ == "__main__":
    main()
