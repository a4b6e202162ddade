"""Code coverage of a Python task's reference by a suite's inputs, with coverage.py.

The reference runs in the sandbox as always; its worker records the line arcs each
call runs, the way coverage.py's own tracer does (``worker._arc_tracer``: the
sandbox has no site-packages). Here, outside the sandbox, coverage.py analyses the
module's source with those arcs: which statements and branches exist, which ran.
Counted: the reference and the module's functions it names, transitively (its
helpers; a helper only the specification uses is not the code under test);
module-level statements run when the module loads, not per input, so they are not
counted.
"""

from __future__ import annotations

import ast
import json
import tempfile
from collections.abc import Iterable
from pathlib import Path

import coverage

from veriscale.backends.base import CodeCoverage
from veriscale.backends.python.format import REQUIRED_FUNCTIONS

REFERENCE = REQUIRED_FUNCTIONS["reference"]


def code_under_test(source: str) -> set[str]:
    """The module's top-level functions the reference reaches by name, with it."""
    tree = ast.parse(source)
    functions = {node.name: node for node in tree.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    reached, todo = set(), [REFERENCE]
    while todo:
        name = todo.pop()
        if name in reached or name not in functions:
            continue
        reached.add(name)
        todo += [n.id for n in ast.walk(functions[name]) if isinstance(n, ast.Name)]
    return reached


def measure(source: str, arcs: Iterable[Iterable[tuple[int, int]]]) -> CodeCoverage:
    """Statement and branch coverage of ``source``'s reference and its helpers
    (:func:`code_under_test`) by the union of ``arcs`` (one collection per input that
    ran)."""
    counted = code_under_test(source)
    ran = {arc for one in arcs for arc in one}
    with tempfile.TemporaryDirectory(prefix="veriscale-coverage-") as tmp:
        module = Path(tmp) / "reference.py"
        module.write_text(source, encoding="utf-8")
        data = coverage.CoverageData(basename=str(Path(tmp) / ".coverage"))
        data.add_arcs({str(module): ran})
        data.write()
        cov = coverage.Coverage(data_file=str(Path(tmp) / ".coverage"), branch=True,
                                config_file=False)
        cov.load()
        report = Path(tmp) / "coverage.json"
        cov.json_report(morfs=[str(module)], outfile=str(report))
        found = json.loads(report.read_text(encoding="utf-8"))["files"][str(module)]
    lines = branches = lines_ran = branches_ran = 0
    missing: list[int] = []
    for name, region in found.get("functions", {}).items():
        if name.split(".")[0] not in counted:
            continue  # "" is the module level; nested functions are "outer.inner"
        summary = region["summary"]
        lines += summary["num_statements"]
        lines_ran += summary["covered_lines"]
        branches += summary.get("num_branches", 0)
        branches_ran += summary.get("covered_branches", 0)
        missing += region["missing_lines"]
    return CodeCoverage(lines_ran, lines, branches_ran, branches, tuple(sorted(missing)))
