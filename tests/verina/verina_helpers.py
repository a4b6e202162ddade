"""Small synthetic VERINA tasks for the format and lint tests (no data needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from veriscale.backends.lean.format import write_task_dir
from veriscale.backends.lean.sections import LeanSections
from veriscale.benchmark.model import ExpectedPair, Signature, Task


def make_task(task_id: str = "toy_1") -> Task:
    sig = Signature.from_json({
        "name": "countIn",
        "parameters": [
            {"param_name": "s", "param_type": "String"},
            {"param_name": "xs", "param_type": "List Nat"},
        ],
        "return_type": "Nat",
    })
    lean = LeanSections(
        solution_imports="import Mathlib\n",
        precond="  s.length ≥ 0\n",
        code="  xs.length + s.length\n",
        postcond="  result = xs.length + s.length\n",
    )
    tests = [
        ExpectedPair(("ab", (1, 2)), 4, [3, 5]),
        ExpectedPair(("", ()), 0, [1]),
        ExpectedPair(('q"uote\\', (7,)), 9, []),
    ]
    return Task(task_id, "-----Description-----\nCount.\n", sig, tests, [("x", (0,))], {"lean": lean})


def write_dataset(root: Path, n: int = 3) -> list[Path]:
    """``n`` valid toy tasks under ``root``."""
    return [write_task_dir(make_task(f"toy_{i}"), root / f"toy_{i}") for i in range(1, n + 1)]


def edit_json(path: Path, fn: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    result = fn(data)  # edit in place (returns None) or return the new content
    data = data if result is None else result
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False), encoding="utf-8")
