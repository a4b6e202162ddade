"""Mutation throughput: mutants per second, measured in one run.

Two figures per type: single schema steps (``Mutator.mutate``, ingredient pool
on) and whole inputs from the multi-step driver (``mutate_inputs``: 1-5 steps,
dedup, pool feeding — what the pipeline calls). Run: ``python benchmarks/bench_mutation.py``.
"""

from __future__ import annotations

import random
import time
from typing import Any

from veriscale.expansion.mutation import (
    IngredientPool,
    MutationConfig,
    Mutator,
    mutate_inputs,
)
from veriscale.values import ValueType, parse_type

CASES: list[tuple[str, Any]] = [
    ("Int", 12345),
    ("String", "hello, world"),
    ("List Int", tuple(range(10))),
    ("List Int", tuple(range(1000))),
    ("Array Nat", tuple(range(1000))),
    ("List (List Nat)", tuple(tuple(range(5)) for _ in range(10))),
    ("List (Prod Int Int)", tuple((i, -i) for i in range(20))),
]


def _per_second(fn: Any, min_seconds: float = 0.5) -> float:
    count, start = 0, time.perf_counter()
    while True:
        count += fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return count / elapsed


def bench_steps(t: ValueType, value: Any) -> float:
    rng = random.Random(0)
    pool = IngredientPool()
    pool.add(t, value)
    mutator = Mutator(t)

    def batch() -> int:
        for _ in range(200):
            mutator.mutate(value, rng, pool)
        return 200

    return _per_second(batch)


def bench_driver(t: ValueType, value: Any) -> float:
    seeds = [(value,)]
    state = {"seed": 0}

    def batch() -> int:
        state["seed"] += 1
        return len(mutate_inputs((t,), seeds, MutationConfig(seed=state["seed"])))

    return _per_second(batch)


def main() -> None:
    print(f"{'type':<22}{'size':>6}{'steps/s':>12}{'mutants/s':>12}")
    for text, value in CASES:
        t = parse_type(text)
        size = len(value) if isinstance(value, (tuple, str)) else 1
        print(f"{text:<22}{size:>6}{bench_steps(t, value):>12,.0f}{bench_driver(t, value):>12,.0f}")


if __name__ == "__main__":
    main()
