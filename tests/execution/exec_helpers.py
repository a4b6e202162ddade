"""Shared by the execution tests: a tiny fake ``lean`` and its task."""

from __future__ import annotations

from pathlib import Path

from tool_scripts import python_script
from veriscale.backends.lean.sections import LeanSections
from veriscale.benchmark.model import ExpectedPair, Signature, Task

FAKE_LEAN = r'''
import json, re, sys
path = sys.argv[-1]
for i, line in enumerate(open(path).read().splitlines(), 1):
    m = re.match(r"#eval! decide \((\w+)_precond (.*)\)$", line)
    if m:
        x = int(re.findall(r"-?\d+", m.group(2))[0])
        print(json.dumps({"severity": "information", "data": "true" if x > 0 else "false",
                          "pos": {"line": i, "column": 0}, "endPos": {"line": i, "column": 1}}))
    elif line.startswith("#check"):
        print(json.dumps({"severity": "information", "data": "ok",
                          "pos": {"line": i, "column": 0}, "endPos": {"line": i, "column": 1}}))
'''


def fake_lean(tmp: Path) -> Path:
    return python_script(tmp / "lean", FAKE_LEAN)


def lean_task(task_id: str = "toy_1") -> Task:
    sig = Signature.from_json({"name": "F", "parameters": [{"param_name": "x",
                                                           "param_type": "Int"}],
                               "return_type": "Int"})
    lean = LeanSections(precond="  x > 0", code="  2 * x", postcond="  result = 2 * x")
    return Task(task_id, "double", sig, tests=[ExpectedPair((3,), 6, [5])], reject_inputs=[(-1,)],
                sections={"lean": lean})
