"""What the Lean heartbeat probe saves: one classify with it and one without, in one run.

A VERINA precondition that enumerates up to an input (``List.range k``) cannot
be decided for a huge ``k``; under the full ``maxHeartbeats`` each such check
runs until the budget is spent, which on WASM took minutes per check. The probe
runs every check under ``maxHeartbeats / 200`` first and lets only a few of
those that exceed it scout larger budgets (``LeanBackend._execute``).

Classifies the same inputs of one task (its test and reject inputs, plus
``--huge`` inputs with every ``Nat`` set to large magnitudes) twice, with
``probe_heartbeats=0`` (one round, the full budget for every check) and with the
default probe, one after the other, and prints wall time, Lean processes, the
probe's counts, and whether both gave the same labels::

    python3 benchmarks/bench_lean_heartbeat_probe.py --runner wasm
    python3 benchmarks/bench_lean_heartbeat_probe.py --task verina_advanced_52 --huge 4
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.lean.backend import LeanBackend
from veriscale.values.types import Scalar

VERINA = Path(__file__).resolve().parents[2] / "shared" / "data" / "verina"
HUGE = (4294967296, 9223372036854775807, 9223372036854775808, 18446744073709551616)


def huge_inputs(task: Any, n: int) -> list[tuple[Any, ...]]:
    """The first test input with every ``Nat`` parameter replaced by a large magnitude."""
    base = task.tests[0].input
    out = []
    for i in range(n):
        out.append(tuple(HUGE[i % len(HUGE)] if isinstance(p.type, Scalar)
                         and p.type.name == "Nat" else v
                         for p, v in zip(task.signature.params, base, strict=True)))
    return out


def one(task: Any, inputs: list[Any], runner: str, probe: int | None) -> tuple[float, Any, Any]:
    be = LeanBackend(runner, probe_heartbeats=probe)
    try:
        start = time.perf_counter()
        labels = be.classify(task, inputs)
        return time.perf_counter() - start, labels, be.stats
    finally:
        be.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=VERINA)
    ap.add_argument("--task", default="verina_advanced_52")
    ap.add_argument("--huge", type=int, default=4, help="inputs with huge Nat values")
    ap.add_argument("--runner", default="wasm", choices=("wasm", "native", "auto"))
    args = ap.parse_args()
    (task,), _ = load_benchmark(args.data, [args.task])
    inputs = [t.input for t in task.tests] + list(task.reject_inputs)
    inputs += huge_inputs(task, args.huge)
    print(f"{task.id}: {len(inputs)} inputs ({args.huge} with huge Nat values), "
          f"runner {args.runner}")
    full = one(task, inputs, args.runner, 0)
    probed = one(task, inputs, args.runner, None)
    for name, (secs, _, stats) in (("full budget", full), ("probe", probed)):
        print(f"  {name:12s} {secs:8.1f} s  Lean processes {stats.processes}  "
              f"heartbeat probe {stats.extra.get('heartbeat_probe', '-')}")
    same = [a.label for a in full[1]] == [b.label for b in probed[1]]
    print(f"  same labels: {same}; probe / full: {probed[0] / full[0]:.2f}")


if __name__ == "__main__":
    main()
