"""How much of VERINA's own ground truth the Lean screen accepts, and how fast it reads.

The screen must refuse hostile candidates (tests/lean/test_lean_hostile.py) without
refusing ordinary Lean: the ground truth's own sections are a proxy for what an
honest model writes. Prints the share accepted (specification bodies as terms,
aux sections and the code definition as commands), every refusal with its reason,
and the screen's throughput.

    PYTHONPATH=src python3 benchmarks/bench_lean_screen.py [../shared/data/verina]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.lean.render import code_definition as lean_code_definition
from veriscale.backends.lean.safety import check_untrusted_lean
from veriscale.backends.lean.sections import lean_sections

ROOT = Path(__file__).resolve().parents[1]


def sections(task) -> list[tuple[str, str, str]]:
    lean = lean_sections(task)
    return [("precond", lean.precond, "term"), ("postcond", lean.postcond, "term"),
            ("precond_aux", lean.precond_aux, "commands"),
            ("postcond_aux", lean.postcond_aux, "commands"),
            ("code", lean_code_definition(task, lean.code, lean.code_aux), "commands")]


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "data" / "verina"
    tasks, _ = load_benchmark(root)
    items = [(t.id, name, text, kind) for t in tasks if lean_sections(t) is not None
             for name, text, kind in sections(t) if text.strip()]
    refused = []
    start = time.perf_counter()
    for tid, name, text, kind in items:
        why = check_untrusted_lean(text, kind)
        if why:
            refused.append((tid, name, why))
    seconds = time.perf_counter() - start
    chars = sum(len(text) for _, _, text, _ in items)
    print(f"{len(items)} ground-truth sections of {len(tasks)} tasks: "
          f"{len(items) - len(refused)} accepted, {len(refused)} refused")
    for tid, name, why in refused:
        print(f"  {tid} {name}: {why}")
    print(f"screen: {len(items) / seconds:.0f} sections/s, {chars / seconds / 1e6:.2f} MB/s")


if __name__ == "__main__":
    main()
