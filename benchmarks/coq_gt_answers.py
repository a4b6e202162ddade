"""Every ground-truth answer of a Coq suite, as JSON: to show that a change to how check
files are written changes no answer, and what it saves.

    python benchmarks/coq_gt_answers.py SUITE_DIR --out FILE [--compare OLD_FILE]

Asks the Coq backend, with no oracle cache, for the reference's output on every test
input, the GT precondition on every test and reject input, and the GT postcondition on
every expected and unexpected output, in the batched calls the pipeline makes. Writes
each answer (value, verdict, and the reason of every UNKNOWN) per task, and prints the
wall seconds, ``coqc`` processes, their seconds and reruns. With ``--compare``, prints
how many answers differ from an earlier file (made by another checkout of the code,
e.g. ``PYTHONPATH=OLD/src python benchmarks/coq_gt_answers.py ...``) and the first few.
A reason that changed between two resource limits (memory, time) under a loaded machine
is a difference of the machine, not of the code: such pairs are counted apart.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def answers(suite: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    from veriscale.backends import dispatch
    from veriscale.backends.datasets import load_benchmark
    from veriscale.backends.registry import make_backend

    tasks, _ = load_benchmark(suite)
    tasks = sorted(tasks, key=lambda t: t.id)
    backend = make_backend("coq")
    start = time.perf_counter()
    runs = dispatch.many(backend, "run", [(t, None, [x.input for x in t.tests]) for t in tasks])
    pre = dispatch.many(backend, "precondition_holds", [
        (t, None, [x.input for x in t.tests] + list(t.reject_inputs)) for t in tasks])
    post = dispatch.many(backend, "postcondition_holds", [
        (t, None, [(x.input, x.expected) for x in t.tests]
         + [(x.input, u) for x in t.tests for u in x.unexpected]) for t in tasks])
    figures = {"seconds": round(time.perf_counter() - start, 1),
               "coqc_processes": backend.stats.processes,
               "coqc_seconds": round(backend.stats.seconds, 1), **backend.stats.extra}
    out = {}
    for t, r, p, q in zip(tasks, runs, pre, post, strict=True):
        out[t.id] = {"run": [repr(o) for o in r],
                     "pre": [str(v) for v in p], "pre_why": list(getattr(p, "reasons", [])),
                     "post": [str(v) for v in q], "post_why": list(getattr(q, "reasons", []))}
    return out, figures


def _limit(text: str) -> bool:
    """A reason (or a run's outcome) that says only which resource limit was hit."""
    return text.startswith(("memory:", "timeout:")) or "error='memory:" in text \
        or "error='timeout:" in text


def compare(old: dict[str, Any], new: dict[str, Any]) -> None:
    total = differ = limits = 0
    shown = 0
    for task in sorted(set(old) | set(new)):
        a, b = old.get(task, {}), new.get(task, {})
        for field in sorted(set(a) | set(b)):
            xs, ys = a.get(field, []), b.get(field, [])
            if len(xs) != len(ys):
                print(f"{task} {field}: {len(xs)} answers before, {len(ys)} after")
            for x, y in zip(xs, ys, strict=False):
                total += 1
                if x == y:
                    continue
                if _limit(x) and _limit(y):
                    limits += 1
                    continue
                differ += 1
                if shown < 10:
                    shown += 1
                    print(f"{task} {field}:\n  before: {x[:200]}\n  after:  {y[:200]}")
    print(f"{total} answers: {differ} differ; {limits} only in which resource limit was hit")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--compare", type=Path)
    args = ap.parse_args()
    got, figures = answers(args.suite)
    args.out.write_text(json.dumps(got, indent=0, sort_keys=True))
    print(json.dumps(figures))
    if args.compare is not None:
        compare(json.loads(args.compare.read_text()), got)


if __name__ == "__main__":
    main()
