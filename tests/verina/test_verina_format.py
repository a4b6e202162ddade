"""The VERINA directory format: reading, byte-exact writing, malformed folders."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest
from verina_helpers import edit_json, make_task, write_dataset

from veriscale.backends.datasets import load_benchmark, task_dirs
from veriscale.backends.language import plugin_for
from veriscale.backends.lean.format import (
    SECTION_FIELDS,
    SectionError,
    lean_text,
    load_task_dir,
    parse_lean_sections,
    render_task_lean,
    sections_equal,
    split_sections,
    with_sections,
    write_task_dir,
)
from veriscale.backends.lean.sections import LeanSections, lean_sections


@pytest.fixture(scope="module")
def verina_tasks(verina_dir):
    tasks, issues = load_benchmark(verina_dir)
    return tasks, issues


def _no_path(task):
    """The task without its folder, as text: canonical values have one repr, and
    NaN (in verina_basic_63's reject inputs) is equal to itself only that way."""
    return repr(dataclasses.replace(task, path=None))


# ---------------------------------------------------------------- the real data


def test_all_189_tasks_load_and_every_value_parses(verina_tasks):
    tasks, issues = verina_tasks
    value_issues = [i for i in issues if i.kind in ("unparsable", "ill_typed")]
    by_task = {}
    for issue in value_issues:
        by_task.setdefault(issue.task, []).append(f"{issue.file}{issue.field}: {issue.message}")
    assert not by_task, by_task
    assert len(tasks) == 189
    # Only the two advanced tasks whose signature.json uses other key names.
    assert {(i.task, i.file, i.field, i.kind) for i in issues} == {
        ("verina_advanced_31", "signature.json", "parameters", "signature_mismatch"),
        ("verina_advanced_74", "signature.json", "parameters", "signature_mismatch"),
    }


def test_loaded_counts_match_the_paper(verina_tasks):
    tasks, _ = verina_tasks
    assert sum(len(t.tests) for t in tasks) == 1114
    assert sum(len(c.unexpected) for t in tasks for c in t.tests) == 2392
    assert sum(len(t.reject_inputs) for t in tasks) == 123


def test_sections_as_verina_reads_them(verina_tasks):
    tasks, _ = verina_tasks
    by_id = {t.id: t for t in tasks}
    adv10 = lean_sections(by_id["verina_advanced_10"])
    assert adv10.task_imports == "import Mathlib.Data.Nat.Prime.Defs\n"
    assert adv10.precond.startswith("  n > 0 ∧\n")
    assert "def removePrimeFactor" in adv10.precond_aux
    assert adv10.proof == "  sorry\n"
    assert lean_sections(by_id["verina_basic_1"]).solution_imports == "import Mathlib\n"
    assert "structure Map" in lean_sections(by_id["verina_basic_104"]).task_aux
    counts = {name: sum(1 for t in tasks if getattr(lean_sections(t), name).strip()) for name in
              ("task_aux", "solution_aux", "code_aux", "postcond_aux", "proof_aux",
               "precond_aux", "solution_imports")}
    assert counts == {"task_aux": 3, "solution_aux": 27, "code_aux": 45, "postcond_aux": 10,
                      "proof_aux": 2, "precond_aux": 1, "solution_imports": 27}
    assert sum(1 for t in tasks if plugin_for(t).trivial_precondition(t)) == 110


def test_task_lean_is_written_byte_for_byte(verina_tasks, verina_dir):
    tasks, _ = verina_tasks
    for task in tasks:
        original = (verina_dir / task.id / "task.lean").read_bytes()
        assert lean_text(task).encode("utf-8") == original, task.id


def test_write_then_read_gives_equal_tasks(verina_tasks, verina_dir, tmp_path):
    tasks, _ = verina_tasks
    for task in tasks:
        out = write_task_dir(task, tmp_path / task.id)
        assert (out / "task.lean").read_bytes() == (verina_dir / task.id / "task.lean").read_bytes()
        assert (out / "signature.json").exists() == (verina_dir / task.id / "signature.json").exists()
        again, issues = load_task_dir(out)
        assert not issues, issues
        assert _no_path(again) == _no_path(task), task.id
    # Writing what we read is a fixed point of the JSON files too.
    for name in ("test.json", "reject_inputs.json", "task.json"):
        first = (tmp_path / "verina_basic_1" / name).read_text(encoding="utf-8")
        task, _ = load_task_dir(tmp_path / "verina_basic_1")
        write_task_dir(task, tmp_path / "again" / task.id)
        assert (tmp_path / "again" / task.id / name).read_text(encoding="utf-8") == first


def test_rendered_template_parses_back_to_the_same_sections(verina_tasks):
    tasks, _ = verina_tasks
    for task in tasks:
        text = render_task_lean(task.signature, lean_sections(task))
        assert sections_equal(parse_lean_sections(text), lean_sections(task)), task.id


def test_changed_sections_render_the_template(verina_tasks, tmp_path):
    tasks, _ = verina_tasks
    task = next(t for t in tasks if t.id == "verina_basic_1")
    changed = with_sections(task, code="  a * b ≤ 0\n")
    text = lean_text(changed)
    assert text != lean_sections(task).source
    assert "def hasOppositeSign (a : Int) (b : Int) (h_precond : hasOppositeSign_precond (a) (b))" \
        " : Bool :=\n  -- !benchmark @start code\n  a * b ≤ 0\n  -- !benchmark @end code\n" in text
    out = write_task_dir(changed, tmp_path / changed.id)
    again, issues = load_task_dir(out)
    assert not issues
    assert lean_sections(again).code == "  a * b ≤ 0\n"
    assert sections_equal(lean_sections(again), lean_sections(changed))


# ---------------------------------------------------------------- built from scratch


def test_task_from_scratch_round_trips(tmp_path):
    task = make_task()
    out = write_task_dir(task, tmp_path / task.id)
    assert not (out / "signature.json").exists()
    meta = json.loads((out / "task.json").read_text(encoding="utf-8"))
    assert list(meta)[:2] == ["id", "signature"]
    again, issues = load_task_dir(out)
    assert not issues, issues
    assert again.tests == task.tests
    assert again.reject_inputs == task.reject_inputs
    assert again.description == task.description
    assert sections_equal(lean_sections(again), lean_sections(task))
    assert again.signature == task.signature
    # The harness-facing JSON holds the escaped body of the nasty string.
    rows = json.loads((out / "test.json").read_text(encoding="utf-8"))
    assert rows[2]["input"]["s"] == 'q\\"uote\\\\'
    assert rows[0] == {"input": {"s": "ab", "xs": "[1, 2]"}, "expected": 4, "unexpected": [3, 5]}


def test_unindented_bodies_are_indented_when_rendered():
    task = make_task()
    task = task.with_section("lean", LeanSections(precond="True", code="xs.length\n  + 1",
                                                  postcond="result ≥ 0"))
    text = render_task_lean(task.signature, lean_sections(task))
    parsed = parse_lean_sections(text)
    assert parsed.precond == "  True\n"
    assert parsed.code == "  xs.length\n    + 1\n"
    assert "theorem countIn_spec_satisfied (s: String) (xs: List Nat) (h_precond : " \
        "countIn_precond (s) (xs)) :\n    countIn_postcond (s) (xs) (countIn (s) (xs) h_precond)" \
        " h_precond := by\n" in text


def test_write_refuses_a_value_of_the_wrong_type(tmp_path):
    task = make_task()
    task.tests[0].expected = -1  # not a Nat
    with pytest.raises(ValueError, match=r"toy_1: test.json\[0\]"):
        write_task_dir(task, tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


# ---------------------------------------------------------------- malformed folders


@pytest.mark.parametrize(
    ("breakage", "file", "kind", "loads"),
    [
        ("missing_lean", "task.lean", "missing_file", False),
        ("missing_task_json", "task.json", "missing_file", False),
        ("missing_tests", "test.json", "missing_file", True),
        ("bad_json", "test.json", "bad_json", True),
        ("bad_task_json", "task.json", "bad_json", False),
        ("unknown_section", "task.lean", "bad_section", False),
        ("unclosed_section", "task.lean", "bad_section", False),
        ("bad_type", "task.json", "bad_type", False),
    ],
)
def test_malformed_task_gives_an_issue_and_others_still_load(tmp_path, breakage, file, kind,
                                                             loads):
    dirs = write_dataset(tmp_path, 3)
    broken = dirs[1]
    if breakage == "missing_lean":
        (broken / "task.lean").unlink()
    elif breakage == "missing_task_json":
        (broken / "task.json").unlink()
    elif breakage == "missing_tests":
        (broken / "test.json").unlink()
    elif breakage == "bad_json":
        (broken / "test.json").write_text("[{\"input\": ", encoding="utf-8")
    elif breakage == "bad_task_json":
        (broken / "task.json").write_text("{,}", encoding="utf-8")
    elif breakage == "unknown_section":
        text = (broken / "task.lean").read_text(encoding="utf-8")
        text = text.replace("@start code_aux", "@start helper_aux").replace(
            "@end code_aux", "@end helper_aux")
        (broken / "task.lean").write_text(text, encoding="utf-8")
    elif breakage == "unclosed_section":
        text = (broken / "task.lean").read_text(encoding="utf-8")
        (broken / "task.lean").write_text(text.replace("  -- !benchmark @end proof\n", ""),
                                          encoding="utf-8")
    elif breakage == "bad_type":
        def retype(meta):
            meta["signature"]["parameters"][1]["param_type"] = "List (Nat"
        edit_json(broken / "task.json", retype)
    tasks, issues = load_benchmark(tmp_path)
    assert [i.task for i in issues] == ["toy_2"], issues
    assert (issues[0].file, issues[0].kind) == (file, kind)
    assert issues[0].message
    assert sorted(t.id for t in tasks) == (["toy_1", "toy_2", "toy_3"] if loads
                                           else ["toy_1", "toy_3"])


def test_bad_values_are_skipped_and_named(tmp_path):
    (path,) = write_dataset(tmp_path, 1)

    def plant(rows):
        rows[0]["unexpected"][1] = "71]"        # truncated
        rows[1]["expected"] = "true)"           # truncated: the whole row goes
        rows[2]["input"]["xs"] = "[1, -1]"      # negative Nat: the whole row goes
    edit_json(path / "test.json", plant)
    task, issues = load_task_dir(path)
    assert task is not None
    found = {(i.file, i.field, i.kind) for i in issues}
    assert found == {
        ("test.json", "[0].unexpected[1]", "unparsable"),
        ("test.json", "[1].expected", "unparsable"),
        ("test.json", "[2].input.xs", "ill_typed"),
    }
    assert all(i.task == "toy_1" for i in issues)
    assert len(task.tests) == 1 and task.tests[0].unexpected == [3]


def test_marker_errors_name_the_line():
    with pytest.raises(SectionError, match="line 2"):
        split_sections("-- !benchmark @start code\n-- !benchmark @start proof\n")
    with pytest.raises(SectionError, match="unknown benchmark marker"):
        split_sections("-- !benchmark @begin code\n")
    with pytest.raises(SectionError, match="does not close"):
        split_sections("-- !benchmark @start code\nx\n-- !benchmark @end proof\n")
    with pytest.raises(SectionError, match="code section"):
        parse_lean_sections("-- !benchmark @start precond\nTrue\n-- !benchmark @end precond\n")


def test_import_sections_follow_verina_rules():
    text = (
        "-- !benchmark @start import type=solution\nimport Mathlib\n-- !benchmark @end import\n"
        "-- !benchmark @start import type=llm\nimport Foo\n-- !benchmark @end import\n"
        "-- !benchmark @start import type=task\nimport Bar\n-- !benchmark @end import\n"
        "-- !benchmark @start precond\n\n-- !benchmark @end precond\n"
        "-- !benchmark @start code\n  1\n-- !benchmark @end code\n"
    )
    sections = parse_lean_sections(text)
    assert sections.solution_imports == "import Mathlib\n"
    assert sections.task_imports == "import Bar\n"
    assert sections.precond == LeanSections().precond  # blank keeps the default
    assert sections.code == "  1\n"
    assert set(SECTION_FIELDS) >= {"task_imports", "solution_imports", "proof"}


def test_copy_of_real_task_with_unknown_section_does_not_stop_others(verina_dir, tmp_path):
    for name in ("verina_basic_1", "verina_basic_2", "verina_advanced_10"):
        shutil.copytree(verina_dir / name, tmp_path / name)
    lean = tmp_path / "verina_basic_2" / "task.lean"
    lean.write_text(lean.read_text(encoding="utf-8").replace("@start proof_aux", "@start lemma")
                    .replace("@end proof_aux", "@end lemma"), encoding="utf-8")
    tasks, issues = load_benchmark(tmp_path)
    assert [t.id for t in tasks] == ["verina_advanced_10", "verina_basic_1"]
    assert [(i.task, i.file, i.kind) for i in issues] == [
        ("verina_basic_2", "task.lean", "bad_section")]
    assert "lemma" in issues[0].message
    assert len(task_dirs(tmp_path)) == 3
