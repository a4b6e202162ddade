"""Oracle-cache and reduce round-trip figures (prints them; no asserts).

    PYTHONPATH=src python3 benchmarks/bench_cache.py [--tasks N]

1. ``veriscale run`` on bundled Python tasks three times, each into a fresh run
   directory (so every stage recomputes) holding a copy of the first run's
   oracle cache: cold, unchanged, and with one knob changed
   (``mutation.max_mutations_per_input``). Prints wall time, oracle items
   asked, and the cache hit rate of each.
2. The reduce round trip on the bundled Lean (VERINA-format) tasks: a run
   whose oracle is the tasks' Python twins (no Lean needed), then
   ``reduce_suite`` on its ``plus/`` with its run directory; prints Plus and
   Lite sizes and whether the result equals the run's ``lite/`` byte for byte.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "src" / "veriscale" / "examples" / "bundled"
BUNDLED_LEAN = ROOT / "src" / "veriscale" / "examples" / "bundled_lean"
sys.path.insert(0, str(ROOT / "tests" / "pipeline"))

CONFIG = {
    "seed": 11,
    "seeds": {"candidates_per_round": 10},
    "mutation": {"max_mutations_per_input": 4, "max_candidates_per_task": 300},
    "report": {"time_evaluation": "off"},
}


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def timed_run(out: Path, cache_from: Path | None, settings: dict) -> tuple[float, dict]:
    from veriscale.pipeline.config import RunConfig
    from veriscale.pipeline.run import ORACLE_CACHE, run_pipeline

    out.mkdir(parents=True)
    if cache_from is not None:
        shutil.copy(cache_from / ORACLE_CACHE, out / ORACLE_CACHE)
    start = time.perf_counter()
    result = run_pipeline(BUNDLED, out, RunConfig.model_validate(settings),
                          console=Console(quiet=True), report=False)
    wall = time.perf_counter() - start
    if result.errors:
        print("errors:", result.errors)
    return wall, result.oracle_cache


def cache_figures(work: Path, tasks: list[str]) -> None:
    import copy

    base = {**CONFIG, "tasks": tasks}
    changed = copy.deepcopy(base)
    changed["mutation"]["max_mutations_per_input"] += 1
    print(f"oracle cache, {len(tasks)} bundled Python tasks")
    print(f"{'run':<28}{'wall s':>9}{'asked':>9}{'hits':>9}{'misses':>9}{'hit rate':>10}")
    first = work / "cold"
    for label, out, source, settings in [
        ("cold (empty cache)", first, None, base),
        ("unchanged rerun", work / "same", first, base),
        ("one knob changed", work / "knob", first, changed),
    ]:
        wall, stats = timed_run(out, source, settings)
        asked = stats["hits"] + stats["misses"]
        rate = stats["hits"] / asked if asked else 0.0
        print(f"{label:<28}{wall:>9.1f}{asked:>9}{stats['hits']:>9}{stats['misses']:>9}"
              f"{rate:>9.1%}")


def reduce_figures(work: Path) -> None:
    from twin_backend import twin_run

    from veriscale.backends.datasets import load_benchmark
    from veriscale.pipeline.reduce import reduce_suite

    tasks = sorted(p.name for p in BUNDLED_LEAN.iterdir() if p.is_dir())
    run = work / "lean-run"
    start = time.perf_counter()
    result = twin_run(BUNDLED_LEAN, BUNDLED, run, tasks, mutation={
        "max_mutations_per_input": 8, "max_candidates_per_task": 400})
    run_wall = time.perf_counter() - start
    if result.errors:
        print("errors:", result.errors)
    plus, _ = load_benchmark(run / "plus")
    start = time.perf_counter()
    summary = reduce_suite(plus, work / "lite-again", run_dir=run)
    reduce_wall = time.perf_counter() - start
    same = tree(work / "lite-again") == tree(run / "lite")
    print(f"\nreduce round trip, {len(tasks)} bundled Lean tasks (twin oracle run "
          f"{run_wall:.1f} s, reduce {reduce_wall:.2f} s)")
    print(f"{'task':<22}{'plus pairs':>11}{'lite pairs':>11}{'plus rejects':>13}"
          f"{'lite rejects':>13}")
    for tid, row in summary["per_task"].items():
        print(f"{tid:<22}{row['pairs']:>11}{row['lite_pairs']:>11}{row['reject_inputs']:>13}"
              f"{row['lite_reject_inputs']:>13}")
    total = {k: sum(r[k] for r in summary["per_task"].values())
             for k in ("pairs", "lite_pairs", "reject_inputs", "lite_reject_inputs")}
    print(f"{'total':<22}{total['pairs']:>11}{total['lite_pairs']:>11}"
          f"{total['reject_inputs']:>13}{total['lite_reject_inputs']:>13}")
    print(f"veriscale reduce == the run's lite/, byte for byte: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8, help="bundled Python tasks to run")
    args = parser.parse_args()
    tasks = sorted(p.name for p in BUNDLED.iterdir() if p.is_dir())[: args.tasks]
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp:
        cache_figures(Path(tmp), tasks)
        reduce_figures(Path(tmp))


if __name__ == "__main__":
    main()
