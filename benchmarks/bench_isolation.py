"""What OS isolation costs: evaluation throughput with isolation on and off, and
the evaluator's memory with a hostile large-output candidate.

Usage: python benchmarks/bench_isolation.py [--max-mutants N] [--tests N] [--skip-memory]

Throughput: ``discriminative_power`` (built-in mutants + the ground truth, every
check a real sandbox call) on the bundled benchmark, checks per second =
backend checks / wall seconds, for ``--sandbox os`` (bubblewrap) and
``--sandbox none``. Memory: peak RSS of an evaluator process that scores one
candidate returning ``[1] * 4_000_000`` (and one returning just under the
result cap) on a task with ``--tests`` tests, measured by ``getrusage`` in a
fresh subprocess. Works on older trees without the ``sandbox`` option (then
the one mode measured is "legacy").
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUNDLED = Path(__file__).resolve().parents[1] / "src" / "veriscale" / "examples" / "bundled"


def throughput(mode: str | None, max_mutants: int) -> dict[str, float]:
    from veriscale.backends.datasets import load_benchmark
    from veriscale.backends.python.backend import PythonBackend
    from veriscale.evaluation.power import discriminative_power

    tasks, _ = load_benchmark(BUNDLED)
    opts = {} if mode is None else {"sandbox": mode}
    start = time.perf_counter()
    with PythonBackend(workers=2, **opts) as backend:
        discriminative_power(backend, [("bundled", tasks)], max_per_kind=max_mutants, seed=0)
        checks = backend.stats.checks
        processes = backend.stats.processes
    wall = time.perf_counter() - start
    return {"checks": checks, "seconds": wall, "checks_per_s": checks / wall,
            "processes": processes}


MEMORY_PROBE = r'''
import json, resource, sys, tempfile
from pathlib import Path
from veriscale.backends.base import Implementation
from veriscale.backends.python.backend import PythonBackend
from veriscale.backends.python.format import new_task_dir, load_task_dir
n_tests, mode, body = int(sys.argv[1]), sys.argv[2], sys.argv[3]
task_py = """# veriscale: precondition
def precondition(n):
    return n >= 0

# veriscale: reference
def reference(n):
    return [1] * n

# veriscale: postcondition
def postcondition(n, result):
    return result == [1] * n
"""
root = Path(tempfile.mkdtemp())
d = new_task_dir(root, "ones", "ones", [("n", "Nat")], "List Nat", task_py,
                 tests=[{"input": {"n": k}, "expected": "[" + ", ".join(["1"] * k) + "]",
                         "unexpected": []} for k in range(n_tests)])
task, issues = load_task_dir(d)
opts = {} if mode == "legacy" else {"sandbox": mode}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with PythonBackend(workers=2, **opts) as b:
    outs = b.run(task, Implementation("def ones(n):\n" + body + "\n"), [t.input for t in task.tests])
    kinds = sorted({o.error.split(":")[0] if o.error else "ok" for o in outs})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"peak_mb": peak / 1024, "before_mb": before / 1024, "outcomes": kinds}))
'''


def memory(mode: str, n_tests: int, body: str) -> dict[str, object]:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(MEMORY_PROBE)
    done = subprocess.run([sys.executable, fh.name, str(n_tests), mode, body],
                          capture_output=True, text=True, check=False)
    Path(fh.name).unlink()
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mutants", type=int, default=20)
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--modes", default="os,none")
    args = parser.parse_args()
    try:
        from veriscale.backends import isolation
    except ImportError:
        modes: list[str | None] = [None]
    else:
        modes = [m for m in args.modes.split(",") if m]
        print(f"isolation available: {isolation.resolve('auto').describe()}")
    rates = {}
    for mode in modes:
        r = throughput(mode, args.max_mutants)
        rates[mode or "legacy"] = r["checks_per_s"]
        print(f"throughput [{mode or 'legacy'}]: {r['checks']} checks in {r['seconds']:.2f} s = "
              f"{r['checks_per_s']:.0f} checks/s ({r['processes']} worker processes)")
    if "os" in rates and "none" in rates:
        print(f"isolation cost: {rates['none'] / rates['os']:.2f}x (none/os)")
    if args.skip_memory:
        return
    hostile = {
        "[1] * 4_000_000": "    return [1] * 4_000_000",
        "just under the cap": "    return [1] * 340_000",
    }
    for mode in [m or "legacy" for m in modes]:
        for name, body in hostile.items():
            m = memory(mode, args.tests, body)
            print(f"memory [{mode}] {args.tests} tests, candidate returns {name}: {m}")


if __name__ == "__main__":
    main()
