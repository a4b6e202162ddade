"""How often a run encodes and decodes each value, and what it costs.

    python3 benchmarks/bench_value_codecs.py [BENCHMARK_DIR] [--tasks a,b] [--out RUN]

runs the pipeline on a benchmark (default: the bundled example; ``--tasks`` for a
few of its tasks) in a fresh run directory with every value codec counted: the benchmark format's (VERINA JSON,
``Signature.encode_*`` / ``decode_*``) and the records' neutral form
(``Signature.dump_*`` / ``load_*``). It prints, per codec and direction, the calls,
the seconds spent in them (no oracle cache), and the calls per value of the final Plus suite (its
inputs plus expected and unexpected outputs), beside the run's wall time; and how
many stage-record files the run read and parsed (a record the run directory holds
in memory is read from no file).
"""

from __future__ import annotations

import argparse
import functools
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console

from veriscale.backends.datasets import load_benchmark
from veriscale.benchmark.model import Signature
from veriscale.pipeline.config import RunConfig
from veriscale.pipeline.run import run_pipeline
from veriscale.rundir import RunDir

BUNDLED = Path(__file__).resolve().parents[1] / "src/veriscale/examples/bundled"
METHODS = {"encode_input": "format", "encode_output": "format", "decode_input": "format",
           "decode_output": "format", "dump_input": "records", "dump_output": "records",
           "load_input": "records", "load_output": "records"}


def counted() -> tuple[Counter[str], Counter[str]]:
    calls: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    for name in METHODS:
        original = getattr(Signature, name)

        @functools.wraps(original)
        def wrapper(self: Signature, *args: Any, _f: Any = original, _n: str = name) -> Any:
            start = time.perf_counter()
            try:
                return _f(self, *args)
            finally:
                calls[_n] += 1
                seconds[_n] += time.perf_counter() - start

        setattr(Signature, name, wrapper)
    return calls, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("benchmark", nargs="?", type=Path, default=BUNDLED)
    ap.add_argument("--tasks", help="comma-separated task ids (default: all)")
    ap.add_argument("--out", type=Path,
                    help="keep the run directory here (default: a temporary one)")
    args = ap.parse_args()
    calls, seconds = counted()
    reads = Counter[str]()
    envelope = RunDir._envelope

    def counted_envelope(self: RunDir, task_id: str, stage: str, *rest: Any) -> Any:
        reads[stage] += 1
        return envelope(self, task_id, stage, *rest)

    RunDir._envelope = counted_envelope  # type: ignore[method-assign]
    config = RunConfig(tasks=args.tasks.split(",") if args.tasks else None)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "run"
        start = time.perf_counter()
        run_pipeline(args.benchmark, out, config, console=Console(quiet=True), cache=False)
        wall = time.perf_counter() - start
        plus, _ = load_benchmark(out / "plus")
    values = sum(1 + 1 + len(t.unexpected) for task in plus for t in task.tests)
    values += sum(len(task.reject_inputs) for task in plus)
    print(f"{args.benchmark.name}: run {wall:.1f} s; final Plus holds {values:,} values "
          f"(inputs, expected and unexpected outputs, reject inputs)")
    print(f"{'codec':8} {'call':14} {'calls':>10} {'per value':>10} {'seconds':>9}")
    for name, codec in METHODS.items():
        print(f"{codec:8} {name:14} {calls[name]:>10,} {calls[name] / max(values, 1):>10.2f} "
              f"{seconds[name]:>9.2f}")
    tasks = len(plus)
    print(f"stage-record files read and parsed: {sum(reads.values())} for {tasks} tasks "
          f"({', '.join(f'{k} {v}' for k, v in sorted(reads.items()))})")


if __name__ == "__main__":
    main()
