"""Coverage of a task's reference by a suite: the sandbox's arc tracer must record
what coverage.py's own tracer records, so the figures are coverage.py's."""

from __future__ import annotations

import json
from pathlib import Path

import coverage
import pytest

from veriscale.backends.base import CodeCoverage
from veriscale.backends.python.backend import PythonBackend
from veriscale.backends.python.code_coverage import measure
from veriscale.backends.python.sections import PythonSections, render_sections
from veriscale.benchmark.model import Signature, Task

AUX = '''def sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    return 0


def evens(xs):
    for x in xs:
        if x % 2 == 0:
            yield x
'''
REFERENCE = '''def reference(xs, k):
    total = 0
    try:
        for x in evens(xs):
            total += sign(x) * k
    except ZeroDivisionError:
        total = -1
    if not xs:
        return 0

    def pick(a, b):
        return a if a > b else b

    while k > 100:
        k //= 2
    return pick(total, max(xs) // (k or 1)) if k else total
'''
PRE = "def precondition(xs, k):\n    return k >= 0\n"
POST = "def postcondition(xs, k, result):\n    return isinstance(result, int)\n"


def _task() -> Task:
    sig = Signature.from_json({"name": "f", "return_type": "Int", "parameters": [
        {"param_name": "xs", "param_type": "List Int"},
        {"param_name": "k", "param_type": "Nat"}]})
    return Task("cov", "", sig, sections={"python": PythonSections(
        aux=AUX, precondition=PRE, reference=REFERENCE, postcondition=POST)})


def _by_coverage_py(tmp: Path, source: str, inputs: list[tuple]) -> CodeCoverage:
    """The same figures with coverage.py's own tracer, in this process."""
    module = tmp / "own.py"
    module.write_text(source)
    cov = coverage.Coverage(data_file=None, branch=True, config_file=False,
                            include=[str(module)])
    namespace: dict = {}
    cov.start()
    try:
        exec(compile(source, str(module), "exec"), namespace)
        for args in inputs:
            namespace["reference"](*[list(a) if isinstance(a, tuple) else a for a in args])
    finally:
        cov.stop()
    data = cov.get_data()
    arcs = {a for a in data.arcs(str(module)) or () if not _module_level(a, source)}
    return measure(source, [arcs])


def _module_level(arc: tuple[int, int], source: str) -> bool:
    """Arcs of the module's own body (its load): the sandbox does not trace the load."""
    return (arc[0] < 0 and -arc[0] == 1) or (arc[1] < 0 and -arc[1] == 1)


@pytest.mark.parametrize("inputs", [
    [((2, 4), 3)],
    [((), 0)],
    [((1, 2, -2, 0), 1), ((4,), 0), ((), 5), ((6, 8), 400)],
])
def test_the_sandbox_records_what_coverage_py_records(tmp_path: Path, inputs) -> None:
    task = _task()
    source = render_sections(task.section("python"))
    with PythonBackend(workers=1, timeout=5.0) as backend:
        got = backend.reference_coverage(task, inputs)
    assert got == _by_coverage_py(tmp_path, source, inputs)
    assert 0 < got.lines_covered <= got.lines_total and got.branches_total > 0


def test_more_inputs_cover_more_and_all_paths_cover_all() -> None:
    task = _task()
    with PythonBackend(workers=1, timeout=5.0) as backend:
        one = backend.reference_coverage(task, [((2,), 1)])
        many = backend.reference_coverage(
            task, [((2,), 1), ((1, 2, -2, 0), 1), ((4,), 0), ((), 5), ((6, 8), 400)])
    assert one.lines_covered < many.lines_covered and one.branches_covered < many.branches_covered
    assert set(many.missing_lines) < set(one.missing_lines)
    # the pre- and postcondition are not the code being covered
    pre_line = render_sections(task.section("python")).splitlines().index(PRE.splitlines()[1]) + 1
    assert pre_line not in one.missing_lines
    json.dumps(many.__dict__)  # plain data


def test_the_coverage_command_per_suite_and_why_not(tmp_path: Path, bundled_dir: Path,
                                                    bundled_lean_dir: Path) -> None:
    """``veriscale coverage``: figures per suite for Python tasks (JSON), and for a
    Lean suite the reason, per task, without making a Lean backend at all."""
    from click.testing import CliRunner

    from veriscale.cli import main

    runner = CliRunner()
    got = runner.invoke(main, ["coverage", str(bundled_dir), str(bundled_lean_dir),
                               "--tasks", "vs_binary_search,vs_two_sum", "--json",
                               "--per-task"])
    assert got.exit_code == 0, got.output
    python, lean = json.loads(got.output)["suites"]
    assert python["tasks_measured"] == python["tasks"] == 2
    assert 0 < python["lines_covered"] <= python["lines_total"]
    assert python["per_task"]["vs_binary_search"]["available"]
    assert lean["tasks_measured"] == 0 and lean["line_coverage"] is None
    assert all("neither reports which lines ran" in r["reason"]
               for r in lean["per_task"].values())
    missing = runner.invoke(main, ["coverage", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2
