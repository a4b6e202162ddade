"""The leaderboard: its statistics directly, and the command on two suites and three
models with the real Python backend."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from test_evaluation_python import GT_CODE, TESTS, write_suite

from veriscale.cli import main
from veriscale.evaluation.leaderboard import drop_interval, kendall_tau, ranks


def test_ranks_share_places_on_ties() -> None:
    assert ranks({"a": 0.9, "b": 0.5, "c": 0.9, "d": 0.1}) == {"a": 1.5, "c": 1.5, "b": 3,
                                                               "d": 4}


def test_kendall_tau_reads_agreement() -> None:
    a = {"x": 3.0, "y": 2.0, "z": 1.0}
    assert kendall_tau(a, a) == 1.0
    assert kendall_tau(a, {"x": 1.0, "y": 2.0, "z": 3.0}) == -1.0
    assert kendall_tau(a, {"x": 1.0, "y": 1.0, "z": 1.0}) is None  # one scoring ties all
    assert kendall_tau({"x": 1.0}, {"x": 2.0}) is None


@given(st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 1), min_size=1),
       st.floats(-1, 1), st.integers(0, 5))
def test_the_drop_lies_in_its_interval(base: dict[str, float], shift: float, seed: int) -> None:
    other = {t: min(1.0, max(0.0, v - shift)) for t, v in base.items()}
    got = drop_interval(base, other, rounds=200, seed=seed)
    assert got is not None
    drop, lo, hi = got
    assert lo - 1e-9 <= drop <= hi + 1e-9 or lo == hi
    assert drop_interval(base, other, rounds=200, seed=seed) == got  # seeded
    assert drop_interval(base, {}, rounds=200) is None


def test_leaderboard_command_writes_table_json_csv_png_and_page(tmp_path: Path) -> None:
    original = write_suite(tmp_path / "original", tests=TESTS[:2])
    plus = write_suite(tmp_path / "plus")
    wrong = "def floorDiv(a, b):\n    return int(a / b)\n"  # wrong on negatives
    weak = "def postcondition(a, b, result):\n    return True\n"
    files = {}
    for name, lines in {"good": [{"task_id": "t_div", "code": GT_CODE}],
                        "trunc": [{"task_id": "t_div", "code": wrong, "postcond": weak}]}.items():
        files[name] = tmp_path / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(x) + "\n" for x in lines))
    args = ["leaderboard", str(original), str(plus), "--sandbox", "none",
            *[f"--solutions={n}={p}" for n, p in files.items()], "--no-cache"]
    out = tmp_path / "out"
    res = CliRunner().invoke(main, [*args, "--json", "--csv", str(out / "b.csv"),
                                    "--png", str(out / "b.png"), "--html", str(out / "b.html")])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output[res.output.index("{\n"):])  # past the --sandbox none warning
    rows = {(r["suite"], r["model"], r["metric"]): r for r in data["rows"]}
    assert rows[("original", "good", "code")]["lower"] == 1.0
    assert rows[("plus", "trunc", "code")]["lower"] == 0.0  # plus has the negative inputs
    assert rows[("plus", "trunc", "code")]["drop"] == rows[("original", "trunc", "code")]["lower"]
    assert rows[("plus", "good", "code")]["rank"] == 1
    assert set(data["kendall_tau"]["code"]) == {"original vs plus"}
    with (out / "b.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 2 * 2 * 2
    assert (out / "b.png").read_bytes()[:4] == b"\x89PNG"
    page = (out / "b.html").read_text()
    assert "data:image/png;base64," in page and "http" not in page.replace(
        "<!doctype html>", "")
    assert "t_div" in page and "trunc" in page and "-4" in page  # a counterexample
    text = CliRunner().invoke(main, args, env={"COLUMNS": "80"})
    assert text.exit_code == 0 and "Kendall" in text.output and "good" in text.output
    # on an 80-column terminal every figure is still printed: trunc's code drop on plus
    trunc_plus = [line for line in text.output.splitlines()
                  if "plus" in line and "trunc" in line and "code" in line]
    assert len(trunc_plus) == 1 and "…" not in trunc_plus[0], text.output
    assert trunc_plus[0].split()[3:] == ["0.00", "0.00", "0.00", "2", "0.00", "[0.00,", "0.00]"]
