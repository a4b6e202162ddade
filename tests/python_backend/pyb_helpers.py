"""Helpers of the Python backend tests: a small Python-spec task written on the fly."""

from __future__ import annotations

import json
from pathlib import Path

TASK_PY = '''\
# veriscale: aux
def shift(xs, k):
    return [x + k for x in xs]

# veriscale: precondition
def precondition(xs, k):
    return len(xs) > 0

# veriscale: reference
def reference(xs, k):
    return max(shift(xs, k))

# veriscale: postcondition
def postcondition(xs, k, result):
    ys = shift(xs, k)
    return result in ys and all(result >= y for y in ys)
'''

TESTS = [
    {"input": {"xs": "[1, 5, 3]", "k": 2}, "expected": 7, "unexpected": [5, 8]},
    {"input": {"xs": "[-4]", "k": 0}, "expected": -4, "unexpected": [0]},
    {"input": {"xs": "[0, 0]", "k": 10}, "expected": 10, "unexpected": []},
]
REJECTS = [{"input": {"xs": "[]", "k": 3}}]


def write_task(root: Path, task_id: str = "max_plus_k", tests: list | None = None,
               rejects: list | None = None, task_py: str = TASK_PY) -> Path:
    d = root / task_id
    d.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": "veriscale-python/1",
        "id": task_id,
        "signature": {
            "name": "maxPlusK",
            "parameters": [{"param_name": "xs", "param_type": "List Int"},
                           {"param_name": "k", "param_type": "Nat"}],
            "return_type": "Int",
        },
        "description_file": "./description.txt",
        "code_file": "./task.py",
        "test_file": "./test.json",
        "reject_inputs_file": "./reject_inputs.json",
        "metadata": {"difficulty": "easy"},
    }
    (d / "task.json").write_text(json.dumps(meta))
    (d / "description.txt").write_text(
        "-----Description-----\nThe largest element plus k.\n"
        "-----Input-----\nxs: non-empty list; k: natural\n-----Output-----\nAn integer.\n")
    (d / "task.py").write_text(task_py)
    (d / "test.json").write_text(json.dumps(TESTS if tests is None else tests))
    (d / "reject_inputs.json").write_text(json.dumps(REJECTS if rejects is None else rejects))
    return d
