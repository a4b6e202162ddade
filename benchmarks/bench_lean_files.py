"""Peak memory and wall time of one Lean process against checks per file.

Writes, for each size N, one Lean file holding N checks over the bundled Lean
tasks (half ``decide`` of the precondition, half ``#reduce`` of the reference),
runs it once with the chosen runner under ``/usr/bin/time`` semantics (peak
resident memory of the process tree via ``resource.getrusage``), and prints
one line per size. ``backends/lean/backend.py`` ``FILE_LIMITS`` is sized from
these figures (the WASM module's 32-bit memory caps a process near 4 GB).

    python3 benchmarks/bench_lean_files.py --runner wasm 60 2400 6000
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.lean import render
from veriscale.backends.lean.runner import make_runner
from veriscale.expansion.mutation import MutationConfig, mutate_inputs

BUNDLED_LEAN = Path(__file__).resolve().parents[1] / "src/veriscale/examples/bundled_lean"


def probe_file(n: int, kernel: bool) -> str:
    tasks, _ = load_benchmark(BUNDLED_LEAN)
    units = []
    per = max(1, n // (2 * len(tasks)))
    for k, task in enumerate(tasks):
        seeds = [c.input for c in task.tests]
        more = mutate_inputs(task.signature, seeds,
                             MutationConfig(max_mutations_per_input=per, seed=1))
        cmds: list[str] = []
        for inp in (seeds + list(more))[:per]:
            cmds.append(render.decide_command(render.precond_term(task, inp), kernel))
            cmds.append(render.value_command(render.call_term(task, inp, True, kernel),
                                             task.signature.return_type, kernel))
        units.append(render.Unit(render.namespace_for(task.id, k), render.Variant(task), cmds))
    return render.layout_file(units, kernel=kernel, max_heartbeats=400000).text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="+", type=int)
    ap.add_argument("--runner", default="wasm", choices=["wasm", "native"])
    args = ap.parse_args()
    runner = make_runner(args.runner)
    work = Path(tempfile.mkdtemp(prefix="veriscale-bench-", dir="/tmp"))
    for n in args.sizes:
        path = work / f"bench_{n}.lean"
        path.write_text(probe_file(n, kernel=args.runner == "wasm"), encoding="utf-8")
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.monotonic()
        result = runner.run_file(path)
        seconds = time.monotonic() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        checks = path.read_text().count("\n#reduce")
        errors = sum(m.is_error for m in result.messages)
        note = "" if peak > before else " (peak not above an earlier size's)"
        print(f"{args.runner} checks={checks} seconds={seconds:.0f} peak_mb={peak // 1024}"
              f"{note} messages={len(result.messages)} errors={errors} "
              f"failure={result.failure or '-'}", flush=True)


if __name__ == "__main__":
    main()
