"""The harness end to end with the real Python backend, on a small task written here."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from veriscale.backends import isolation
from veriscale.backends.datasets import load_benchmark
from veriscale.backends.python.format import new_task_dir
from veriscale.cli import main
from veriscale.evaluation.harness import evaluate, evaluate_candidate
from veriscale.evaluation.mutants import gt_candidate, task_mutants
from veriscale.evaluation.power import discriminative_power
from veriscale.evaluation.scoring import Bounded, Score
from veriscale.evaluation.solutions import load_solutions

P, F, U = Score.PASS, Score.FAIL, Score.UNKNOWN

TASK_PY = '''# veriscale: aux
def floor_div(a, b):
    return a // b

# veriscale: precondition
def precondition(a, b):
    return b != 0

# veriscale: reference
def reference(a, b):
    return floor_div(a, b)

# veriscale: postcondition
def postcondition(a, b, result):
    return result * b <= a < (result + 1) * b if b > 0 else result * b >= a > (result + 1) * b
'''

TESTS = [
    {"input": {"a": 7, "b": 2}, "expected": 3, "unexpected": [4, 2]},
    {"input": {"a": -7, "b": 2}, "expected": -4, "unexpected": [-3]},
    {"input": {"a": 7, "b": -2}, "expected": -4, "unexpected": [-3, 3]},
    {"input": {"a": 0, "b": 5}, "expected": 0, "unexpected": [1]},
]


def write_suite(root: Path, tests: list[dict[str, Any]] | None = None,
                rejects: list[dict[str, Any]] | None = None) -> Path:
    new_task_dir(
        root, "t_div", "floorDiv", [("a", "Int"), ("b", "Int")], "Int", TASK_PY,
        description="Floor division of a by a non-zero b.\n",
        tests=TESTS if tests is None else tests,
        rejects=[{"input": {"a": 1, "b": 0}}] if rejects is None else rejects,
    )
    return root


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    from veriscale.backends.registry import make_backend

    be = make_backend("python", timeout=0.5)
    yield be
    be.close()


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite")


def score_lines(backend: Any, suite: Path, lines: list[dict[str, Any]], tmp_path: Path) -> Any:
    tasks, issues = load_benchmark(suite)
    assert not issues
    path = tmp_path / "sol.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    cands, sol_issues = load_solutions(path, tasks)
    assert not sol_issues
    return evaluate(backend, tasks, cands, ks=(1,))


GT_CODE = "def floorDiv(a, b):\n    return a // b\n"
GT_PRE = "def precondition(a, b):\n    return b != 0\n"
GT_POST = ("def postcondition(a, b, result):\n"
           "    return a // b == result\n")


def test_gt_solution_passes_everything(backend: Any, suite: Path, tmp_path: Path) -> None:
    rep = score_lines(backend, suite, [
        {"task_id": "t_div", "code": GT_CODE, "precond": GT_PRE, "postcond": GT_POST}], tmp_path)
    (s,) = rep.tasks[0].samples
    assert all(v == Bounded(P, P) for v in s.metrics.values()), s.metrics
    assert "code_spec" in s.metrics
    assert s.tallies["postcond_sound"].passed == 6
    assert rep.score("code_spec") == 1.0
    assert rep.wall_seconds > 0 and rep.code_seconds > 0 and rep.spec_seconds > 0


def test_ground_truth_candidate_passes(backend: Any, suite: Path) -> None:
    (task,), _ = load_benchmark(suite)
    r = evaluate_candidate(backend, task, gt_candidate(task))
    assert all(v == Bounded(P, P) for v in r.metrics.values()), (r.metrics, r.errors)


@pytest.mark.parametrize(("code", "expected"), [
    ("def floorDiv(a, b):\n    return a // b + (1 if a == 0 else 0)\n", F),  # wrong on one test
    ("def floorDiv(a, b):\n    return int(a / b)\n", F),  # truncates instead of flooring
    ("def floorDiv(a, b):\n    raise ValueError('no')\n", F),  # runtime error
    ("def floorDiv(a, b):\n    return str(a // b)\n", F),  # ill-typed result
    ("def floorDiv(a, b):\n    return a //\n", F),  # syntax error
    ("def other(a, b):\n    return a // b\n", F),  # wrong function name
    ("def floorDiv(a, b):\n    while True:\n        pass\n", U),  # loops: never PASS
])
def test_planted_wrong_code(backend: Any, suite: Path, tmp_path: Path, code: str,
                            expected: Score) -> None:
    rep = score_lines(backend, suite, [{"task_id": "t_div", "code": code}], tmp_path)
    got = rep.tasks[0].samples[0].metrics["code"]
    assert got == Bounded(expected, expected), rep.tasks[0].samples[0].errors
    assert rep.score("code", "upper") == 0.0


def test_loop_on_some_inputs_is_not_pass(backend: Any, suite: Path, tmp_path: Path) -> None:
    code = "def floorDiv(a, b):\n    while a == 0:\n        pass\n    return a // b\n"
    rep = score_lines(backend, suite, [{"task_id": "t_div", "code": code}], tmp_path)
    s = rep.tasks[0].samples[0]
    assert s.metrics["code"] == Bounded(U, U)
    assert s.tallies["code"].passed == 3 and s.tallies["code"].unknown == 1


@pytest.mark.parametrize(("line", "metric", "expected"), [
    # a trivial precondition is unsound against the reject input
    ({"precond": "def precondition(a, b):\n    return True\n"}, "precond_complete", F),
    # too strong: rejects the valid input with a negative divisor
    ({"precond": "def precondition(a, b):\n    return b > 0\n"}, "precond_sound", F),
    ({"precond": "def precondition(a, b)\n    return b\n"}, "precond_sound", F),  # syntax
    # accepts anything: unsound
    ({"postcond": "def postcondition(a, b, result):\n    return True\n"}, "postcond_sound", F),
    # true division: rejects the right answers
    ({"postcond": "def postcondition(a, b, result):\n    return result == a / b\n"},
     "postcond_complete", F),
    # a postcondition that hangs is never PASS
    ({"postcond": "def postcondition(a, b, result):\n    while result == a // b:\n"
                  "        pass\n    return False\n"}, "postcond_complete", U),
])
def test_planted_wrong_specs(backend: Any, suite: Path, tmp_path: Path, line: dict[str, str],
                             metric: str, expected: Score) -> None:
    rep = score_lines(backend, suite, [{"task_id": "t_div", **line}], tmp_path)
    s = rep.tasks[0].samples[0]
    assert s.metrics[metric].lower is expected, (s.metrics, s.errors)
    assert s.metrics[metric].upper is expected
    side = "precond" if "precond" in line else "postcond"
    assert s.metrics[f"{side}_sound_complete"].upper is not P


def test_partly_hanging_spec_has_bounds(backend: Any, suite: Path, tmp_path: Path) -> None:
    post = ("def postcondition(a, b, result):\n    while result == -3:\n        pass\n"
            "    return a // b == result\n")
    rep = score_lines(backend, suite, [{"task_id": "t_div", "postcond": post}], tmp_path)
    s = rep.tasks[0].samples[0]
    # -3 hangs, the other outputs are rejected: the hang is the spec's own cost, so the
    # upper bound does not lift it (VERINA's would say PASS)
    assert s.metrics["postcond_sound"] == Bounded(U, U)
    assert s.tallies["postcond_sound"].spent >= 1
    assert s.metrics["postcond_complete"] == Bounded(P, P)


def test_pass_at_k_over_samples(backend: Any, suite: Path, tmp_path: Path) -> None:
    bad = "def floorDiv(a, b):\n    return 0\n"
    lines = [{"task_id": "t_div", "sample": i, "code": GT_CODE if i == 0 else bad}
             for i in range(3)]
    rep = score_lines(backend, suite, lines, tmp_path)
    rep.ks = (1, 2, 3)
    assert rep.score("code", "lower", 1) == pytest.approx(1 / 3)
    assert rep.score("code", "lower", 2) == pytest.approx(2 / 3)
    assert rep.score("code", "lower", 3) == pytest.approx(1.0)


def test_mutants_on_small_task(backend: Any, suite: Path, tmp_path: Path) -> None:
    (task,), _ = load_benchmark(suite)
    ms = task_mutants(task, 20, 0)
    assert {m.kind for m in ms} == {"code", "precond", "postcond"}
    other = tmp_path / "weak"
    write_suite(other, tests=TESTS[:1], rejects=[])  # one test, no reject input
    (weak,), _ = load_benchmark(other)
    rep = discriminative_power(backend, [("strong", [task]), ("weak", [weak])])
    strong_r, weak_r = (s.rates() for s in rep.suites)
    assert rep.suites[0].gt_problems == [] and rep.suites[1].gt_problems == []
    assert strong_r["all"]["mutants"] == weak_r["all"]["mutants"] == len(ms)
    assert strong_r["precond"]["rate"] == 1.0
    assert weak_r["precond"]["rate"] < strong_r["precond"]["rate"]  # no reject input
    assert weak_r["all"]["detected"] <= strong_r["all"]["detected"]


def test_a_mutant_whose_compile_check_failed_is_asked_again(backend: Any, suite: Path) -> None:
    """The pool is the same whatever the machine's load: a compile check that said
    nothing about the mutant (a timeout, a checker that failed) is asked once more,
    and a mutant is discarded as unjudged only when that fails too."""
    from veriscale.evaluation.power import usable_mutants

    (task,), _ = load_benchmark(suite)
    pool, _ = usable_mutants(backend, [task], 20, 0)

    class Loaded:
        name = "loaded"

        def __init__(self, fails: int) -> None:
            self.fails, self.calls = fails, 0

        def compile(self, task, impl=None, spec=None):  # type: ignore[no-untyped-def]
            self.calls += 1
            if self.calls <= self.fails:
                return "timeout: the compile check ran out of time"
            return backend.compile(task, impl, spec)

    once = Loaded(fails=1)
    again, discarded = usable_mutants(once, [task], 20, 0)
    assert [m.id for m in again] == [m.id for m in pool] and discarded == []
    always = Loaded(fails=10**6)
    none, discarded = usable_mutants(always, [task], 20, 0)
    assert none == [] and len(discarded) == len(pool)
    assert all("not judged (asked twice): timeout" in d for d in discarded)


def test_mutants_need_same_task_ids(backend: Any, suite: Path, tmp_path: Path) -> None:
    (task,), _ = load_benchmark(suite)
    with pytest.raises(ValueError, match="other task ids"):
        discriminative_power(backend, [("a", [task]), ("b", [])])


def test_gt_problem_is_reported(backend: Any, tmp_path: Path) -> None:
    bad = [dict(TESTS[0], expected=4, unexpected=[3])]
    (task,), _ = load_benchmark(write_suite(tmp_path / "bad", tests=bad))
    rep = discriminative_power(backend, [("bad", [task])], max_per_kind=1)
    assert any("code" in p for p in rep.suites[0].gt_problems)


def test_cli_solutions_and_mutants(suite: Path, tmp_path: Path) -> None:
    sol = tmp_path / "sol.jsonl"
    sol.write_text(json.dumps({"task_id": "t_div", "code": GT_CODE, "precond": GT_PRE,
                               "postcond": GT_POST}) + "\nnot json\n")
    runner = CliRunner()
    res = runner.invoke(main, ["evaluate", str(suite), "--solutions", str(sol), "--json",
                               "-o", "timeout=0.5"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["scores"]["code_spec"]["lower"]["pass@1"] == 1.0
    assert data["issues"] and "line 2" in data["issues"][0]
    res = runner.invoke(main, ["evaluate", str(suite), "--solutions", str(sol)])
    assert res.exit_code == 0, res.output
    assert "pass@1 lower" in res.output and "wall time" in res.output
    copy = tmp_path / "copy"
    shutil.copytree(suite, copy)
    res = runner.invoke(main, ["evaluate", "--mutants", str(suite), str(copy), "--json",
                               "--max-mutants", "3", "-o", "timeout=0.5"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [s["gt_problems"] for s in data["suites"]] == [[], []]
    assert data["suites"][0]["rates"] == data["suites"][1]["rates"]
    res = runner.invoke(main, ["evaluate", str(suite)])
    assert res.exit_code != 0 and "exactly one of" in res.output


def test_bundled_ground_truth_passes_everywhere(bundled_dir: Path, backend: Any) -> None:
    tasks, issues = load_benchmark(bundled_dir)
    assert tasks and not issues
    cands = {t.id: [gt_candidate(t)] for t in tasks}
    rep = evaluate(backend, tasks, cands)
    bad = {tr.task_id: (s.metrics, s.errors) for tr in rep.tasks for s in tr.samples
           if any(v != Bounded(P, P) for v in s.metrics.values())}
    assert not bad
    assert rep.score("code_spec", "lower") == 1.0


def test_mutant_early_stop_keeps_every_verdict(backend: Any, suite: Path) -> None:
    """Stopping at a mutant's first FAIL changes no score, and runs fewer tests."""
    from veriscale.evaluation.power import score_mutants

    (task,), _ = load_benchmark(suite)
    items = [(task, m) for m in task_mutants(task, 20, 0)]

    class Counting:
        def __init__(self, inner: Any) -> None:
            self.inner, self.name, self.items = inner, inner.name, 0

        def __getattr__(self, op: str) -> Any:
            fn = getattr(self.inner, op)

            def counted(*args: Any) -> Any:
                self.items += len(args[-1]) if args and isinstance(args[-1], list) else 0
                return fn(*args)
            return counted

    full, early = Counting(backend), Counting(backend)
    want = score_mutants(full, items, early_stop=False)
    got = score_mutants(early, items)
    assert got == want
    assert early.items < full.items


def test_round_slices_cover_every_test_once() -> None:
    from veriscale.evaluation.power import round_slices

    assert round_slices(0) == []
    assert round_slices(3) == [(0, 1), (1, 3)]
    assert round_slices(200) == [(0, 1), (1, 5), (5, 21), (21, 85), (85, 200)]
    assert round_slices(7, ()) == [(0, 7)]


def test_looping_mutant_stops_after_its_timeout_budget(backend: Any, tmp_path: Path) -> None:
    """A mutant that times out is cut after ``max_timeouts`` timed-out tests: its other
    tests count as UNKNOWN (the lower bound a full run gives too), and are not run."""
    from veriscale.backends.base import Implementation
    from veriscale.evaluation.mutants import FlawedCandidate
    from veriscale.evaluation.power import score_mutants
    from veriscale.evaluation.solutions import Submission

    tests = [dict(TESTS[0], input={"a": 7 + i, "b": 2}, expected=(7 + i) // 2,
                  unexpected=[]) for i in range(12)]
    (task,), _ = load_benchmark(write_suite(tmp_path / "many", tests=tests))
    loop = Implementation("def reference(a, b):\n    while True:\n        pass\n",
                          id="t_div:code:0", origin="mutant")
    item = (task, FlawedCandidate("t_div", "code", "loop", 0, Submission("t_div", 0, impl=loop)))
    before = backend.stats.checks
    timed = backend.stats.extra.get("reference_timed", 0)
    cut: list[int] = []
    (got,) = score_mutants(backend, [item], max_timeouts=2, cut=cut)
    assert got == Bounded(U, U)  # unknown, never the mutant's FAIL nor a free PASS
    assert cut == [0]
    # rounds of 1 and 4 tests, then cut; and the reference timed on those it had not
    # run yet (its time bounds the mutant's wait, see follow_reference)
    timed = backend.stats.extra.get("reference_timed", 0) - timed
    assert timed <= 5
    assert backend.stats.checks - before == 5 + timed


def test_a_timeout_is_detection_but_not_evidence() -> None:
    from veriscale.evaluation.power import MutantVerdict

    def verdict(score: Bounded) -> MutantVerdict:
        return MutantVerdict("m", "t", "code", "op", score)

    assert verdict(Bounded(U, U)).detected and not verdict(Bounded(U, U)).detected_definitely
    assert verdict(Bounded(F, F)).detected_definitely
    assert verdict(Bounded(U, P)).detected and not verdict(Bounded(U, P)).detected_definitely
    assert not verdict(Bounded(P, P)).detected


def test_mutant_verdicts_do_not_depend_on_how_tasks_are_grouped(bundled_dir: Path,
                                                                 backend: Any) -> None:
    """One batched pass over all tasks (the default) scores every mutant as per-task groups do."""
    tasks, _ = load_benchmark(bundled_dir)
    tasks = sorted(tasks, key=lambda t: t.id)[:4]

    def verdicts(size: int | None) -> list[tuple[str, str, Any]]:
        rep = discriminative_power(backend, [("s", tasks)], max_per_kind=3, tasks_per_batch=size)
        return sorted((v.task_id, v.mutant_id, v.score) for v in rep.suites[0].verdicts)

    whole = verdicts(None)
    assert len({task_id for task_id, _, _ in whole}) > 1
    assert whole == verdicts(1)


def test_model_outputs_are_refused_without_isolation(suite: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Untrusted by default means isolated by default: without bubblewrap, scoring a
    file of model outputs stops at once (how to install it, how to override), unless
    --sandbox none says so on purpose; mutants (our own code) keep the warning."""
    from veriscale.backends.isolation import policy

    monkeypatch.setattr(policy, "probe_bwrap", lambda: ("", "bwrap is not installed"))
    monkeypatch.delenv(policy.ENV_VAR, raising=False)
    sol = tmp_path / "sol.jsonl"
    sol.write_text(json.dumps({"task_id": "t_div", "code": GT_CODE}) + "\n")
    runner = CliRunner()
    with isolation.using("none"):  # restores the process-wide mode afterwards
        res = runner.invoke(main, ["evaluate", str(suite), "--solutions", str(sol)])
        assert res.exit_code != 0
        assert "apt-get install bubblewrap" in res.output and "--sandbox none" in res.output
        res = runner.invoke(main, ["evaluate", str(suite), "--solutions", str(sol), "--json",
                                   "--sandbox", "none", "-o", "timeout=0.5"])
        assert res.exit_code == 0, res.output
    with pytest.raises(isolation.IsolationUnavailable, match="model-written"):
        policy.resolve("auto", untrusted=True)
    assert policy.resolve("auto").kind == "none"  # our own code: a warning only


def test_a_candidate_living_on_unknown_is_flagged_with_its_causes(suite: Path,
                                                                  tmp_path: Path) -> None:
    """Per candidate, how many tests were UNKNOWN and why; more than half: flagged."""


    loops = ("def floorDiv(a, b):\n    if a >= 0:\n        while True:\n            pass\n"
             "    return a // b\n")
    sol = tmp_path / "sol.jsonl"
    sol.write_text(json.dumps({"task_id": "t_div", "code": loops}) + "\n"
                   + json.dumps({"task_id": "t_div", "sample": 1, "code": GT_CODE}) + "\n")
    res = CliRunner().invoke(main, ["evaluate", str(suite), "--solutions", str(sol), "--json",
                                    "-o", "timeout=0.3"])
    assert res.exit_code == 0, res.output
    looping, honest = json.loads(res.stdout)["tasks"][0]["samples"]
    assert looping["mostly_unknown"] == ["code"], looping
    assert looping["unknown_causes"]["code"] == {"timeout": looping["tests"]["code"]["unknown"]}
    assert "mostly_unknown" not in honest and "unknown_causes" not in honest
    res = CliRunner().invoke(main, ["evaluate", str(suite), "--solutions", str(sol),
                                    "-o", "timeout=0.3"])
    assert "more than half of the tests UNKNOWN on code (timeout" in res.output, res.output


def test_the_tests_that_failed_a_candidate_are_kept_smallest_first(
        backend: Any, suite: Path, tmp_path: Path) -> None:
    truncating = "def floorDiv(a, b):\n    return int(a / b)\n"  # wrong on negatives
    weak = "def postcondition(a, b, result):\n    return True\n"
    strict = "def precondition(a, b):\n    return b > 0\n"
    rep = score_lines(backend, suite, [{"task_id": "t_div", "sample": 0, "code": truncating},
                                       {"task_id": "t_div", "sample": 1, "postcond": weak},
                                       {"task_id": "t_div", "sample": 2, "precond": strict}],
                      tmp_path)
    code, post, pre = (s.counterexamples for s in rep.tasks[0].samples)
    assert code["code"] == [
        {"input": {"a": -7, "b": 2}, "expected": -4, "got": -3},
        {"input": {"a": 7, "b": -2}, "expected": -4, "got": -3}]
    assert "postcond_complete" not in post
    sound = post["postcond_sound"]
    assert len(sound) == 6 and all(c["wanted"] == "rejected" and c["got"] == "true"
                                   for c in sound)  # every one kept; JSON shows the first 3
    assert sound[0]["input"] == {"a": 7, "b": 2}  # the smallest inputs first
    assert pre["precond_sound"] == [{"input": {"a": 7, "b": -2}, "wanted": "holds",
                                     "got": "false"}]
    shown = rep.tasks[0].samples[1].to_json()
    assert shown["counterexamples"]["postcond_sound"] == sound[:3]
    assert shown["counterexamples_total"] == {"postcond_sound": 6}
    lines = list(rep.tasks[0].samples[1].counterexample_lines("plus"))
    assert [x["rank"] for x in lines] == list(range(6))
    assert lines[0] == {"schema": "veriscale.counterexample/1", "suite": "plus",
                        "task_id": "t_div", "sample": 1, "metric": "postcond_sound", "rank": 0,
                        **sound[0]}


def test_counterexamples_export_writes_every_failing_test(suite: Path, tmp_path: Path) -> None:
    sol = tmp_path / "s.jsonl"
    sol.write_text(json.dumps({"task_id": "t_div", "code": "def floorDiv(a, b):\n"
                               "    return int(a / b)\n"}) + "\n")
    out = tmp_path / "cx" / "failed.jsonl"
    res = CliRunner().invoke(main, ["evaluate", str(suite), "--solutions", str(sol),
                                    "--sandbox", "none", "--no-cache",
                                    "--counterexamples", str(out)])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(x["metric"], x["input"], x["expected"], x["got"]) for x in lines] == [
        ("code", {"a": -7, "b": 2}, -4, -3), ("code", {"a": 7, "b": -2}, -4, -3)]
    assert "2 counterexamples" in res.output
    bad = CliRunner().invoke(main, ["evaluate", str(suite), "--mutants",
                                    "--counterexamples", str(out)])
    assert bad.exit_code != 0 and "needs --solutions" in bad.output
