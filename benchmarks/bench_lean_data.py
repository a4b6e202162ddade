"""A batch's values as data or as literals, on the WASM Lean: time and answers, one run.

Usage: python benchmarks/bench_lean_data.py [--data DIR] [--tasks a,b] [--per-task N]
       [--workers N] [--json OUT]

For each task, its first ``--per-task`` candidate inputs as the pipeline makes them
(originals, offline seeds, type-aware mutants; seed 42), and the same questions
asked twice in compiled mode, once with each route (``data = true``, the default,
and ``data = false``): classification of every candidate, and the reference's run on
each. Prints per route the wall seconds, Lean processes, checks, batches asked again
(``rebatched``: a data batch that failed; ``unbatched``: asked singly), and the
answers compared check by check: both decided and equal, both decided and different
(must be 0), decided by one route only. No oracle cache: a fresh measurement.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from veriscale.backends.base import Label, Verdict
from veriscale.backends.datasets import load_benchmark
from veriscale.backends.lean.backend import LeanBackend
from veriscale.llm.provider import make_provider
from veriscale.pipeline.config import RunConfig
from veriscale.pipeline.stages import decode_candidates, stage_candidates

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "verina"
TASKS = ("verina_basic_13,verina_basic_2,verina_basic_41,verina_advanced_8,"
         "verina_advanced_14,verina_basic_88,verina_advanced_40,verina_basic_101")


def _decided(answer: Any) -> Any:
    if isinstance(answer, Verdict):
        return answer if answer in (Verdict.TRUE, Verdict.FALSE) else None
    if hasattr(answer, "label"):
        return answer.label if answer.label != Label.UNKNOWN else None
    return ("value", answer.value) if answer.ok else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--tasks", default=TASKS)
    ap.add_argument("--per-task", type=int, default=256)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tasks, issues = load_benchmark(args.data, [t for t in args.tasks.split(",") if t])
    if issues:
        print("load issues:", issues)
    config, provider = RunConfig(), make_provider(None, backend="lean", seed=42)
    requests: list[tuple[str, tuple[Any, ...]]] = []
    for t in tasks:
        rows = stage_candidates(t, config, provider)["candidates"]
        inputs = [c.input for c in decode_candidates(t, rows)][: args.per_task]
        requests += [("classify", (t, inputs)), ("run", (t, None, inputs))]
    checks = sum(len(a[-1]) for _, a in requests)
    print(f"{len(tasks)} tasks, {checks} checks per route")
    out: dict[str, Any] = {"tasks": [t.id for t in tasks], "checks": checks, "routes": {}}
    answers = {}
    for name, data in (("data", True), ("literals", False)):
        backend = LeanBackend("wasm", mode="compiled", data=data, workers=args.workers)
        start = time.perf_counter()
        answers[name] = backend.evaluate_many(requests)
        seconds = time.perf_counter() - start
        st = backend.stats
        row = {"seconds": round(seconds, 1), "processes": st.processes, "checks": st.checks,
               "rebatched": st.extra.get("rebatched", 0),
               "unbatched": st.extra.get("unbatched", 0)}
        out["routes"][name] = row
        print(f"{name:9s} {row}")
    same = differ = only_data = only_literals = 0
    for got, lit in zip(answers["data"], answers["literals"], strict=True):
        for a, b in zip(got, lit, strict=True):
            da, db = _decided(a), _decided(b)
            if da is not None and db is not None:
                same += da == db
                differ += da != db
            only_data += da is not None and db is None
            only_literals += da is None and db is not None
    out["answers"] = {"same": same, "different": differ, "decided_by_data_only": only_data,
                      "decided_by_literals_only": only_literals}
    r = out["routes"]
    print(f"answers: {out['answers']}")
    print(f"literals / data wall time: x{r['literals']['seconds'] / max(r['data']['seconds'], 1e-9):.2f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
