"""Re-check every VERINA task's suite against its own ground truth with the WASM Lean.

Usage: python benchmarks/verina_wasm_verify.py [--data DIR] [--tasks a,b] [--workers 2]
       [--tasks-per-file 20] [--chunk-size 700] [--out results.json]

Five kinds of checks per task, the dataset's labels as the truth:

* ``precond_test``   - each test input satisfies the GT precondition;
* ``precond_reject`` - each reject input violates it;
* ``post_expected``  - the GT postcondition accepts each expected output;
* ``post_unexpected``- it rejects each unexpected output;
* ``ref_reproduces`` - the reference implementation (kernel ``#reduce``) gives
  the expected output.

For each kind: checks, decided, agreed, disagreed, unknown (with the top
reasons); plus Lean processes, checks per process and wall time. The authors'
pipeline runs one Lean process per check (two to four per candidate input in
its precondition filter), so "processes per check" is the figure to compare.
"""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from veriscale.backends.base import Label, Verdict
from veriscale.backends.datasets import load_benchmark
from veriscale.backends.lean.backend import LeanBackend
from veriscale.benchmark.model import Task
from veriscale.values import values_equal

KINDS = ("precond_test", "precond_reject", "post_expected", "post_unexpected", "ref_reproduces")
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "verina"


def requests_for(task: Task) -> list[tuple[str, tuple[Any, ...]]]:
    inputs = [t.input for t in task.tests] + list(task.reject_inputs)
    pairs = [(t.input, t.expected) for t in task.tests]
    pairs += [(t.input, u) for t in task.tests for u in t.unexpected]
    return [("classify", (task, inputs)), ("postcondition_holds", (task, None, pairs)),
            ("run", (task, None, [t.input for t in task.tests]))]


def score(task: Task, answers: list[list[Any]]) -> list[tuple[str, str, str]]:
    """(kind, status, reason) per check; status is agree / disagree / unknown."""
    classes, verdicts, outcomes = answers
    n = len(task.tests)
    rows: list[tuple[str, str, str]] = []
    for i, c in enumerate(classes):
        kind = "precond_test" if i < n else "precond_reject"
        want = Label.EXPECTED if i < n else Label.UNEXPECTED
        if c.label == Label.UNKNOWN:
            rows.append((kind, "unknown", c.detail))
        else:
            rows.append((kind, "agree" if c.label == want else "disagree", ""))
    for i, v in enumerate(verdicts):
        kind = "post_expected" if i < n else "post_unexpected"
        want = Verdict.TRUE if i < n else Verdict.FALSE
        if v == Verdict.UNKNOWN:
            rows.append((kind, "unknown", "postcondition undecided"))
        else:
            rows.append((kind, "agree" if v == want else "disagree", ""))
    ret = task.signature.return_type
    for t, o in zip(task.tests, outcomes, strict=True):
        if not o.ok:
            rows.append(("ref_reproduces", "unknown", o.error))
        else:
            same = values_equal(ret, o.value, t.expected)
            rows.append(("ref_reproduces", "agree" if same else "disagree",
                         "" if same else f"got {o.value!r}, expected {t.expected!r}"))
    return rows


def run_groups(backend: LeanBackend, tasks: list[Task], per_file: int, workers: int,
               saved: Path) -> list[list[Any]]:
    """Groups of ``per_file`` tasks, ``workers`` groups at a time; saves after each group.

    Each group is one ``evaluate_many`` call (one file unless its checks exceed
    the chunk size), so partial results survive an interrupted run.
    """
    groups = [tasks[i : i + per_file] for i in range(0, len(tasks), per_file)]
    done: dict[int, list[list[Any]]] = {}
    lock = threading.Lock()
    start = time.monotonic()

    def one(gi: int) -> None:
        got = backend.evaluate_many([r for t in groups[gi] for r in requests_for(t)])
        with lock:
            done[gi] = got
            backend.stats.extra["wall_seconds"] = time.monotonic() - start
            flat = [a for k in sorted(done) for a in done[k]]
            ids = [t.id for k in sorted(done) for t in groups[k]]
            saved.write_bytes(pickle.dumps((flat, backend.stats, time.monotonic() - start, ids)))
            logging.info("group %d/%d done (%s .. %s), %.0fs", len(done), len(groups),
                         groups[gi][0].id, groups[gi][-1].id, time.monotonic() - start)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, range(len(groups))))
    backend.stats.extra["wall_seconds"] = time.monotonic() - start
    return [a for gi in range(len(groups)) for a in done[gi]]


def _short(reason: str) -> str:
    for key in ("no Decidable instance", "maxHeartbeats", "stuck reduction", "timeout",
                "unknown identifier", "compile:", "unparsable output", "crash",
                "definitions failed"):
        if key in reason:
            return key
    return reason.split(":", 1)[0][:60]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    ap.add_argument("--workers", type=int, default=2, help="Lean files at a time")
    ap.add_argument("--tasks-per-file", type=int, default=20)
    ap.add_argument("--chunk-size", type=int, default=700)
    ap.add_argument("--timeout", type=float, default=2400.0)
    ap.add_argument("--out", type=Path, default=Path("verina_wasm_verify.json"))
    ap.add_argument("--rescore", action="store_true",
                    help="score the answers saved by a previous run (<out>.pkl) without Lean")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    wanted = [t for t in args.tasks.split(",") if t] or None
    tasks, issues = load_benchmark(args.data, wanted)
    for issue in issues:
        print(f"load issue: {issue}")
    backend = LeanBackend("wasm", workers=1, tasks_per_file=args.tasks_per_file,
                          chunk_size=args.chunk_size, timeout=args.timeout)
    saved = args.out.with_suffix(".pkl")
    if args.rescore:  # also works on the partial results of an unfinished run
        answers, stats, wall, ids = pickle.loads(saved.read_bytes())
        backend.stats = stats
        tasks = [t for t in tasks if t.id in set(ids)]
        tasks.sort(key=lambda t: ids.index(t.id))
    else:
        answers = run_groups(backend, tasks, args.tasks_per_file, args.workers, saved)
        wall = backend.stats.extra["wall_seconds"]

    counts: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    per_task: dict[str, dict[str, int]] = {}
    disagreements: list[dict[str, str]] = []
    for k, task in enumerate(tasks):
        rows = score(task, answers[3 * k : 3 * k + 3])
        per_task[task.id] = dict(Counter(status for _, status, _ in rows))
        for kind, status, reason in rows:
            counts[kind][status] += 1
            if status == "unknown":
                reasons[kind][_short(reason)] += 1
            if status == "disagree":
                disagreements.append({"task": task.id, "kind": kind, "detail": reason})

    total = Counter()
    print(f"\n{'kind':16} {'checks':>7} {'decided':>8} {'agreed':>7} {'disagreed':>9} {'unknown':>8}")
    for kind in KINDS:
        c = counts[kind]
        n = sum(c.values())
        decided = c["agree"] + c["disagree"]
        total.update(c)
        print(f"{kind:16} {n:7} {decided:8} {c['agree']:7} {c['disagree']:9} {c['unknown']:8}"
              f"   {dict(reasons[kind].most_common(4))}")
    n_all = sum(total.values())
    print(f"{'all':16} {n_all:7} {total['agree'] + total['disagree']:8} {total['agree']:7} "
          f"{total['disagree']:9} {total['unknown']:8}")
    fully = sum(1 for v in per_task.values() if not v.get("unknown"))
    st = backend.stats
    print(f"\ntasks: {len(tasks)} loaded ({len(issues)} load issues); "
          f"{fully} with every check decided")
    print(f"Lean processes: {st.processes} for {st.checks} checks "
          f"({st.processes / max(st.checks, 1):.4f} processes per check; "
          f"one process per check would be {st.checks}); "
          f"timeouts {st.extra['timeouts']}, crashes {st.extra['crashes']}")
    print(f"wall time: {wall:.0f}s; Lean process time: {st.seconds:.0f}s")
    args.out.write_text(json.dumps({
        "counts": {k: dict(v) for k, v in counts.items()},
        "unknown_reasons": {k: dict(v) for k, v in reasons.items()},
        "disagreements": disagreements, "per_task": per_task,
        "processes": st.processes, "checks": st.checks, "wall_seconds": wall,
        "lean_seconds": st.seconds, "timeouts": st.extra["timeouts"],
        "crashes": st.extra["crashes"], "load_issues": [str(i) for i in issues],
    }, indent=1))


if __name__ == "__main__":
    main()
