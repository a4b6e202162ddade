"""No task starves silently: the degraded-task policy, and where a run says it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from veriscale.pipeline.degraded import UNKNOWN_SHARE, degraded_causes


def test_fewer_pairs_than_the_original_or_many_unknown_inputs_degrade_a_task() -> None:
    assert degraded_causes(6, 300, {"candidates": 500, "unknown_inputs": 10}) == []
    (lost,) = degraded_causes(6, 3, {"candidates": 500, "unknown_inputs": 0})
    assert "3 expected pairs, fewer than the original suite's 6" in lost
    (unknown,) = degraded_causes(6, 40, {"candidates": 400, "unknown_inputs": 400,
                                          "unknown: did not reduce": 390,
                                          "unknown: timeout": 10})
    assert "400 of 400 candidate inputs (100 %)" in unknown
    assert "did not reduce 390, timeout 10" in unknown
    assert len(degraded_causes(6, 3, {"candidates": 10, "unknown_inputs": 9})) == 2


@given(st.integers(0, 50), st.integers(0, 500), st.integers(1, 1000), st.data())
def test_degraded_exactly_when_a_rule_says_so(original: int, plus: int, candidates: int,
                                              data: st.DataObject) -> None:
    unknown = data.draw(st.integers(0, candidates))
    causes = degraded_causes(original, plus, {"candidates": candidates,
                                              "unknown_inputs": unknown})
    expected = (plus < original) + (unknown > UNKNOWN_SHARE * candidates)
    assert len(causes) == expected


def test_a_run_names_its_degraded_tasks(tmp_path) -> None:
    """A GT precondition that cannot be decided on most candidate inputs (it raises on
    lists longer than two) leaves them unknown: the task is degraded, in the manifest
    and the report, and the run still succeeds (its suites are written)."""
    import json

    from rich.console import Console

    from veriscale.backends.python.format import new_task_dir
    from veriscale.pipeline.config import RunConfig
    from veriscale.pipeline.run import run_pipeline

    task_py = ("# veriscale: aux\n\n# veriscale: precondition\ndef precondition(xs):\n"
               "    if len(xs) > 2:\n        raise ValueError('undecidable here')\n"
               "    return len(xs) > 0\n\n# veriscale: reference\ndef reference(xs):\n"
               "    return max(xs)\n\n# veriscale: postcondition\n"
               "def postcondition(xs, result):\n    return result in xs and "
               "all(x <= result for x in xs)\n")
    new_task_dir(tmp_path / "bench", "max_of", "maxOf", [("xs", "List Int")], "Int", task_py,
                 tests=[{"input": {"xs": [1, 3]}, "expected": 3, "unexpected": [1]}],
                 rejects=[{"input": {"xs": []}}])
    config = RunConfig.model_validate({"seed": 1})
    result = run_pipeline(tmp_path / "bench", tmp_path / "run", config,
                          console=Console(quiet=True))
    assert result.errors == {}
    (why,) = result.degraded["max_of"]
    assert "unknown to the GT precondition (error " in why, why
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["degraded"] == {"max_of": [why]}
    report = (tmp_path / "run" / "report.md").read_text()
    assert "### Degraded tasks" in report and "degraded tasks: 1" in report
    assert (tmp_path / "run" / "plus" / "max_of" / "test.json").exists()
