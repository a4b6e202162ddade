"""Wall time of one ``veriscale run`` under the local executor and under Ray, in one run.

Runs the same benchmark twice (``--executor local``, then ``--executor ray``
on a private local Ray, its start-up included) and prints both wall times,
Ray's overhead on one node, the units Ray ran, and whether ``plus/`` and
``lite/`` are byte-identical. Run::

    python benchmarks/bench_execution.py                              # bundled, Python
    python benchmarks/bench_execution.py src/veriscale/examples/bundled_lean --backend lean

``--keep DIR`` keeps both runs (``DIR/local``, ``DIR/ray``) for their manifests.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def one(benchmark: Path, out: Path, executor: str, extra: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "veriscale.cli", "run", str(benchmark),
                           "--out", str(out), "--executor", executor, *extra],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{executor} run failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("benchmark", nargs="?", type=Path,
                    default=ROOT / "src" / "veriscale" / "examples" / "bundled")
    ap.add_argument("--keep", type=Path, default=None,
                    help="write the two runs to KEEP/local and KEEP/ray and keep them")
    ap.add_argument("extra", nargs=argparse.REMAINDER,
                    help="further `veriscale run` options, e.g. --backend lean --tasks a,b")
    args = ap.parse_args()
    if args.keep and any((args.keep / d).exists() for d in ("local", "ray")):
        sys.exit(f"{args.keep}: local/ or ray/ exists already (a run there would resume)")
    with tempfile.TemporaryDirectory(prefix="bench-execution-") as tmp:
        base = args.keep or Path(tmp)
        local = one(args.benchmark, base / "local", "local", args.extra)
        ray = one(args.benchmark, base / "ray", "ray", args.extra)
        manifest = json.loads((base / "ray" / "manifest.json").read_text())
        same = all(tree(base / "local" / s) == tree(base / "ray" / s) for s in ("plus", "lite"))
    ex = manifest.get("execution", {})
    print(f"benchmark: {args.benchmark} {' '.join(args.extra)}".rstrip())
    print(f"local executor: {local:8.1f} s wall")
    print(f"ray executor:   {ray:8.1f} s wall (local Ray started by the run, "
          f"{ex.get('units', '?')} units, {ex.get('failed_units', '?')} failed)")
    print(f"ray overhead:   {ray - local:+8.1f} s ({ray / local:.2f}x)")
    print(f"plus/ and lite/ byte-identical: {same}")


if __name__ == "__main__":
    main()
