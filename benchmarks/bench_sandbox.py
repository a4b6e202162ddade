"""Checks per second through the Python sandbox: one item per round trip vs batched.

Usage: python benchmarks/bench_sandbox.py [--items N] [--workers W]

Measures a postcondition-style check (a small pure function on a list) through
:class:`veriscale.backends.python.sandbox.Sandbox`, first with ``batch_size=1``
(one item per round trip, the cost model of one process call per check minus
start-up) and then batched, plus the start-up cost of one worker process.
"""

from __future__ import annotations

import argparse
import random
import time

from veriscale.backends.python.sandbox import Sandbox, SandboxLimits

CHECK = '''
def postcondition(xs, k, result):
    ys = [x + k for x in xs]
    return result in ys and all(result >= y for y in ys)
'''


def make_items(n: int, seed: int = 0) -> list[list[object]]:
    rng = random.Random(seed)
    items = []
    for _ in range(n):
        xs = [rng.randint(-100, 100) for _ in range(rng.randint(1, 20))]
        k = rng.randint(0, 10)
        items.append([xs, k, max(xs) + k])
    return items


def measure(items: list[list[object]], workers: int, batch_size: int) -> tuple[float, int]:
    """Checks per second (after a warm-up call) and processes started."""
    with Sandbox(workers=workers, limits=SandboxLimits(), batch_size=batch_size) as sb:
        sb.call_many(CHECK, ["postcondition"], items[:workers * batch_size])  # start + load
        start = time.perf_counter()
        results = sb.call_many(CHECK, ["postcondition"], items)
        elapsed = time.perf_counter() - start
        assert all(r.ok and r.value is True for r in results)
        return len(items) / elapsed, sb.stats.processes


def startup_seconds(rounds: int = 5) -> float:
    total = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        with Sandbox(workers=1) as sb:
            sb.call_many(CHECK, ["postcondition"], [[[1], 0, 1]])
        total += time.perf_counter() - start
    return total / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    items = make_items(args.items)
    print(f"worker start-up + load + 1 check: {startup_seconds() * 1000:.1f} ms")
    for batch in (1, 16, 64, 256):
        rate, procs = measure(items, args.workers, batch)
        label = "per call (1 item/round trip)" if batch == 1 else f"batched ({batch} items/trip)"
        print(f"{label:32s} {rate:10.0f} checks/s  ({args.workers} worker(s), "
              f"{procs} process(es))")


if __name__ == "__main__":
    main()
