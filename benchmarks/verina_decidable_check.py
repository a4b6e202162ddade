"""The Lean-proved decidability instances (backends/lean/decidable.py) against VERINA's
own labels, on the tasks whose specifications need them.

    python3 benchmarks/verina_decidable_check.py [--verina DIR] [--tasks IDS] [--mode MODE]

asks, on the WASM Lean, each task's precondition on its test inputs (must hold) and
reject inputs (must fail), and its postcondition on the expected outputs (must
accept) and the unexpected ones (must reject). It prints, per task and check kind,
how many were decided, how many agree with the label, and the causes of the rest.
A disagreement would be an instance deciding wrongly (the instances are proved in
Lean, so there must be none); an undecided check is only a cost.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from veriscale.backends.base import Label, Verdict, reasons_of
from veriscale.backends.datasets import load_benchmark
from veriscale.backends.registry import make_backend

VERINA = Path(__file__).resolve().parents[2] / "shared" / "data" / "verina"
TASKS = ("verina_basic_40,verina_basic_9,verina_basic_24,verina_basic_21,"
         "verina_advanced_66")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--verina", type=Path, default=VERINA)
    ap.add_argument("--tasks", default=TASKS)
    ap.add_argument("--mode", default="compiled", choices=["compiled", "kernel"])
    args = ap.parse_args()
    tasks, issues = load_benchmark(args.verina, args.tasks.split(","))
    if issues:
        raise SystemExit(f"load issues: {issues}")
    reqs: list[tuple[str, tuple[Any, ...]]] = []
    for t in tasks:
        reqs.append(("classify", (t, [c.input for c in t.tests] + list(t.reject_inputs))))
        reqs.append(("postcondition_holds", (t, None, [(c.input, c.expected) for c in t.tests]
                                             + [(c.input, u) for c in t.tests
                                                for u in c.unexpected])))
    backend = make_backend("lean", runner="wasm", mode=args.mode, timeout=2400)
    start = time.perf_counter()
    try:
        got = backend.evaluate_many(reqs)
    finally:
        backend.close()
    wall = time.perf_counter() - start
    print(f"mode {args.mode}: {wall:.0f} s, {backend.stats.processes} Lean processes")
    print(f"{'task':22} {'check':8} {'asked':>6} {'decided':>8} {'agree':>6}  undecided by cause")
    wrong = 0
    for t, (classify, post) in zip(tasks, zip(got[::2], got[1::2], strict=True), strict=True):
        want_pre = [Label.EXPECTED] * len(t.tests) + [Label.UNEXPECTED] * len(t.reject_inputs)
        n_bad = sum(len(c.unexpected) for c in t.tests)
        want_post = [Verdict.TRUE] * len(t.tests) + [Verdict.FALSE] * n_bad
        for name, answers, want, decided_of in (
                ("pre", classify, want_pre, lambda a: a.label if a.label != Label.UNKNOWN
                 else None),
                ("post", post, want_post, lambda a: a if a in (Verdict.TRUE, Verdict.FALSE)
                 else None)):
            decided = [(decided_of(a), w) for a, w in zip(answers, want, strict=True)
                       if decided_of(a) is not None]
            agree = sum(d == w for d, w in decided)
            wrong += len(decided) - agree
            why = (reasons_of(answers) if name == "post"
                   else [a.detail or "" for a in answers])
            causes = Counter((w or "no reason")[:60] for a, w in zip(answers, why, strict=True)
                             if decided_of(a) is None)
            print(f"{t.id:22} {name:8} {len(answers):>6} {len(decided):>8} {agree:>6}  "
                  + ", ".join(f"{c} ×{n}" for c, n in causes.most_common(3)))
    print(f"disagreements with the labels: {wrong}")


if __name__ == "__main__":
    main()
