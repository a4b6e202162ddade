"""`stats`: Table 1 figures, pure over counts, and the command."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from verina_helpers import edit_json, make_task, write_dataset

from veriscale.cli import main
from veriscale.report.stats import (
    TaskCounts,
    counts_of,
    dataset_counts,
    multipliers,
    raw_counts,
    suite_stats,
)


def test_suite_stats_of_counts():
    stats = suite_stats([TaskCounts("a", 2, 0, 0), TaskCounts("b", 4, 6, 1),
                         TaskCounts("c", 9, 3, 0)])
    assert stats["tasks"] == 3
    assert stats["pairs"] == {"total": 15, "mean": 5.0, "min": 2, "median": 4, "max": 9}
    assert stats["unexpected_outputs"]["total"] == 9
    assert stats["unexpected_inputs"]["median"] == 0
    assert stats["tasks_with_none"] == {"pairs": 0, "unexpected_outputs": 1,
                                        "unexpected_inputs": 2}


def test_suite_stats_accepts_tasks_and_handles_empty():
    task = make_task()
    assert counts_of(task) == TaskCounts("toy_1", 3, 3, 1)
    assert suite_stats([task])["unexpected_outputs"]["total"] == 3
    assert suite_stats([])["pairs"]["mean"] is None


def test_multipliers():
    base = suite_stats([TaskCounts("a", 5, 10, 0), TaskCounts("b", 7, 14, 2)])
    plus = suite_stats([TaskCounts("a", 300, 1000, 0), TaskCounts("b", 420, 1400, 100)])
    m = multipliers(base, plus)
    assert m["pairs"] == pytest.approx(60.0)
    assert m["unexpected_outputs"] == pytest.approx(100.0)
    assert m["unexpected_inputs"] == pytest.approx(50.0)
    zero = suite_stats([TaskCounts("a", 1, 0, 0)])
    assert multipliers(zero, zero)["unexpected_inputs"] is None


def test_raw_counts_count_stored_rows_even_if_values_are_bad():
    rows = [{"input": {}, "expected": "71]", "unexpected": ["x", "y"]}, {"input": {}}]
    assert raw_counts("t", rows, [{"input": {}}]) == TaskCounts("t", 2, 2, 1)
    assert raw_counts("t", None, "oops") == TaskCounts("t", 0, 0, 0)


def test_verina_table1_figures(verina_dir):
    stats = suite_stats(dataset_counts(verina_dir))
    assert stats["tasks"] == 189
    assert round(stats["pairs"]["mean"], 2) == 5.89
    assert stats["pairs"]["total"] == 1114
    assert (stats["pairs"]["min"], stats["pairs"]["median"], stats["pairs"]["max"]) == (2, 5, 13)
    assert stats["unexpected_outputs"]["total"] == 2392
    assert round(stats["unexpected_outputs"]["mean"], 2) == 12.66
    assert stats["unexpected_outputs"]["max"] == 34
    assert round(stats["unexpected_inputs"]["mean"], 2) == 0.65
    assert stats["unexpected_inputs"]["total"] == 123
    assert stats["tasks_with_none"]["unexpected_inputs"] == 112


def test_stats_command(tmp_path):
    write_dataset(tmp_path, 2)
    edit_json(tmp_path / "toy_2" / "reject_inputs.json", lambda rows: [])
    runner = CliRunner()
    result = runner.invoke(main, ["stats", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["tasks"] == 2
    assert data["pairs"]["total"] == 6
    assert data["unexpected_inputs"] == {"total": 1, "mean": 0.5, "min": 0, "median": 0.5,
                                         "max": 1}
    text = runner.invoke(main, ["stats", str(tmp_path)])
    assert text.exit_code == 0 and "unexpected outputs" in text.output
    assert runner.invoke(main, ["stats", str(tmp_path / "none")]).exit_code == 2
    each = json.loads(runner.invoke(main, ["stats", str(tmp_path), "--json", "--per-task"]).output)
    assert each["per_task"]["toy_2"]["unexpected_inputs"] == 0
    assert each["per_task"]["toy_1"]["unexpected_inputs"] == 1
    assert sum(t["pairs"] for t in each["per_task"].values()) == 6
    table = runner.invoke(main, ["stats", str(tmp_path), "--per-task"])
    assert table.exit_code == 0 and "toy_1" in table.output and "toy_2" in table.output
