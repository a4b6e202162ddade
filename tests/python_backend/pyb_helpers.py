"""Helpers of the Python backend tests: a small Python-spec task written on the fly."""

from __future__ import annotations

from pathlib import Path

from veriscale.backends.python.format import new_task_dir

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
    return new_task_dir(
        root, task_id, "maxPlusK", [("xs", "List Int"), ("k", "Nat")], "Int", task_py,
        description="-----Description-----\nThe largest element plus k.\n"
        "-----Input-----\nxs: non-empty list; k: natural\n-----Output-----\nAn integer.\n",
        tests=TESTS if tests is None else tests,
        rejects=REJECTS if rejects is None else rejects,
        metadata={"difficulty": "easy"},
    )
