"""`veriscale run` on VERINA-Coq tasks (real coqc): the suites it writes are passed by
their own ground truth on every row, and the benchmark's rows the ground truth
contradicts are left out and said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from coq_paths import DATA, needs_coqc
from rich.console import Console

from gt_suites import ground_truth_misses
from veriscale.backends.coq.backend import CoqBackend
from veriscale.pipeline.config import RunConfig
from veriscale.pipeline.run import run_pipeline

pytestmark = [pytest.mark.coq, needs_coqc,
              pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} is not present")]

# verina_basic_30's original test 3 expects Lean's `%` on negatives, which Coq's
# Z.modulo is not; verina_basic_84 is consistent.
TASKS = ["verina_basic_30", "verina_basic_84"]


@pytest.fixture(scope="module")
def coq_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("coqrun") / "run"
    config = RunConfig.model_validate({
        "seed": 3, "backend": "coq", "tasks": TASKS,
        "seeds": {"candidates_per_round": 6},
        "mutation": {"max_mutations_per_input": 2, "max_candidates_per_task": 60},
    })
    result = run_pipeline(DATA, out, config, console=Console(quiet=True))
    assert result.errors == {}, result.errors
    return out


def test_rows_the_ground_truth_contradicts_are_left_out_and_listed(coq_run: Path) -> None:
    manifest = json.loads((coq_run / "manifest.json").read_text())
    (row,) = manifest["contradicted_rows"]["verina_basic_30"]
    assert row["input"] == {"a": "[(-10)%Z; (-20)%Z; (30)%Z]", "b": "[(3)%Z; (-7)%Z; (5)%Z]"}
    assert "the reference gives [(2)%Z; (-6)%Z; (0)%Z]" in row["why"]
    assert "verina_basic_84" not in manifest["contradicted_rows"]
    report = (coq_run / "report.md").read_text()
    assert "### Original rows the ground truth contradicts" in report
    for suite in ("plus", "lite"):
        tests = json.loads((coq_run / suite / "verina_basic_30" / "coq_test.json").read_text())
        rows = [t for t in tests if t["input"] == row["input"]]
        # the input comes back with the reference's output, not the benchmark's
        assert all(t["expected"] == "[(2)%Z; (-6)%Z; (0)%Z]" for t in rows), (suite, rows)


def test_the_ground_truth_passes_every_suite_it_wrote(coq_run: Path) -> None:
    backend = CoqBackend(workers=2)
    try:
        for suite in ("plus", "lite"):
            assert ground_truth_misses(backend, coq_run / suite) == [], suite
    finally:
        backend.close()


def test_the_audit_finds_the_under_specified_postcondition(coq_run: Path) -> None:
    """verina_basic_84 (replace the elements above k by -1) never constrains the
    result's length: the audit shows an accepted other output; verina_basic_30's
    benchmark row that the Coq reference contradicts is a test_expected_rejected."""
    data = json.loads((coq_run / "audit.json").read_text())
    got = {(f["task"], f["kind"]): f for f in data["findings"]}
    under = got[("verina_basic_84", "postcondition_accepts_other_output")]
    assert under["count"] >= 1 and under["verdict_source"] == "coq"
    # the smallest: a shorter list than the input's, written as Coq writes it
    assert under["witness"] == {"input": {"arr": "[(0)%Z]", "k": "(1)%Z"},
                                "reference": "[(0)%Z]", "other": "[]"}
    row = got[("verina_basic_30", "test_expected_rejected")]
    assert row["witness"]["input"] == {"a": "[(-10)%Z; (-20)%Z; (30)%Z]",
                                       "b": "[(3)%Z; (-7)%Z; (5)%Z]"}
