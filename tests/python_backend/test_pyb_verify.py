"""``veriscale verify``: a dataset re-checked against its own ground truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyb_helpers import TESTS, write_task

from veriscale.backends.base import Classification, Label, Outcome, Verdict
from veriscale.cli import main
from veriscale.evaluation.verify import KINDS, precond_verdict, reference_verdict, verify_tasks
from veriscale.values import INT


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", *args])
    return result.exit_code, result.stdout


def test_verify_json_all_agree(tmp_path: Path) -> None:
    write_task(tmp_path, "a")
    write_task(tmp_path, "b")
    code, out = _run(str(tmp_path), "--backend", "python", "--json")
    data = json.loads(out)
    assert code == 0, out
    assert data["tasks"] == 2
    assert set(data["checks"]) == set(KINDS)
    assert data["checks"]["precond_accepts_test_input"] == {"agree": 6, "disagree": 0,
                                                             "unknown": 0}
    assert data["checks"]["precond_rejects_reject_input"]["agree"] == 2
    assert data["checks"]["postcond_accepts_expected"]["agree"] == 6
    assert data["checks"]["postcond_rejects_unexpected"]["agree"] == 6
    assert data["checks"]["reference_reproduces_expected"]["agree"] == 6
    assert set(data["per_task"]) == {"a", "b"}
    assert data["per_task"]["a"]["postcond_rejects_unexpected"]["agree"] == 3
    assert data["oracle_processes"] >= 1 and data["seconds"] >= 0
    assert data["unknown_causes"] == {}


def test_verify_counts_why_unknowns_stayed_unknown() -> None:
    from veriscale.evaluation.verify import UNKNOWN, VerifyReport

    report = VerifyReport(tasks=1)
    report.record("t", KINDS[0], UNKNOWN, "test.json[0].input", "maxHeartbeats")
    report.record("t", KINDS[0], UNKNOWN, "test.json[1].input", "stuck reduction: foo")
    report.record("t", KINDS[0], UNKNOWN, "test.json[2].input", "maxHeartbeats (at 2000)")
    report.record("t", KINDS[2], UNKNOWN, "test.json[0].expected")
    report.record("t", KINDS[2], "agree", "test.json[1].expected")
    assert report.to_json()["unknown_causes"] == {
        KINDS[0]: {"maxHeartbeats": 2, "stuck reduction": 1},
        KINDS[2]: {"no reason given": 1}}
    assert report.checks[KINDS[0]].unknown == 3 and not report.findings


def test_verify_finds_disagreements(tmp_path: Path) -> None:
    tests = json.loads(json.dumps(TESTS))
    tests[0]["expected"] = 8  # wrong: reference says 7, postcondition rejects 8
    tests[1]["unexpected"] = [-4]  # the right answer listed as unexpected
    tests[2]["input"]["xs"] = "[]"  # a test input that violates the precondition
    write_task(tmp_path, "bad", tests=tests, rejects=[{"input": {"xs": "[1]", "k": 0}}])
    write_task(tmp_path, "good")
    code, out = _run(str(tmp_path), "--json", "--tasks", "bad")
    assert code == 1
    data = json.loads(out)
    assert data["tasks"] == 1 and list(data["per_task"]) == ["bad"]
    c = data["checks"]
    assert c["precond_accepts_test_input"]["disagree"] == 1
    assert c["precond_rejects_reject_input"]["disagree"] == 1
    assert c["postcond_accepts_expected"]["disagree"] == 2  # the wrong 8, the [] input
    assert c["postcond_rejects_unexpected"]["disagree"] == 1
    # 8 is not reproduced; max([]) raises
    assert c["reference_reproduces_expected"] == {"agree": 1, "disagree": 2, "unknown": 0}
    items = {(d["kind"], d["item"]) for d in data["disagreements"]}
    assert ("postcond_rejects_unexpected", "test.json[1].unexpected[0]") in items


def test_verify_text_and_exit_codes(tmp_path: Path) -> None:
    write_task(tmp_path / "ds", "a")
    code, out = _run(str(tmp_path / "ds"))
    assert code == 0 and "ref" in out and "total" in out
    # the sandbox's two workers, side by side since requests run concurrently
    assert "2 backend process(es)" in out
    (tmp_path / "empty").mkdir()
    assert _run(str(tmp_path / "empty"))[0] == 2
    assert _run(str(tmp_path / "missing"))[0] == 2


def test_verdict_rules() -> None:
    assert precond_verdict(Classification(Label.UNKNOWN, "exec"), Label.EXPECTED)[0] == "unknown"
    assert precond_verdict(Classification(Label.UNEXPECTED, "decide"),
                           Label.EXPECTED)[0] == "disagree"
    assert reference_verdict(INT, Outcome(True, 3), 3)[0] == "agree"
    assert reference_verdict(INT, Outcome(True, 4), 3)[0] == "disagree"
    assert reference_verdict(INT, Outcome(False, error="timeout"), 3)[0] == "unknown"
    assert reference_verdict(INT, Outcome(False, error="unsupported: no"), 3)[0] == "unknown"
    assert reference_verdict(INT, Outcome(False, error="error: KeyError"), 3)[0] == "disagree"


class _BatchOnly:
    """A backend double whose per-task ``classify`` must not be used: it batches."""

    name = "double"

    def __init__(self) -> None:
        from veriscale.backends.base import BackendStats

        self.stats = BackendStats(processes=1)
        self.batches: list[int] = []

    def classify_many(self, jobs):
        self.batches.append(len(jobs))
        return [[Classification(Label.EXPECTED, "decide")] * len(inp) for _, inp in jobs]

    def evaluate_many(self, requests):
        classify = [args for op, args in requests if op == "classify"]
        answers = iter(self.classify_many(classify) if classify else [])
        return [next(answers) if op == "classify" else getattr(self, op)(*args)
                for op, args in requests]

    def classify(self, task, inputs):  # pragma: no cover - must not be used
        raise AssertionError("per-task classify called although the backend batches")

    def postcondition_holds(self, task, spec, pairs):
        return [Verdict.UNKNOWN for _ in pairs]

    def run(self, task, impl, inputs):
        return [Outcome(False, error="unsupported: kernel only") for _ in inputs]


def test_multi_task_batch_api_is_used(tmp_path: Path) -> None:
    from veriscale.backends.datasets import load_benchmark

    for name in ("a", "b", "c"):
        write_task(tmp_path, name)
    tasks, _ = load_benchmark(tmp_path)
    double = _BatchOnly()
    report = verify_tasks(double, tasks)  # type: ignore[arg-type]
    assert double.batches == [3]
    assert report.checks["precond_accepts_test_input"].agree == 9
    assert report.checks["precond_rejects_reject_input"].disagree == 3
    assert report.checks["reference_reproduces_expected"].unknown == 9


def test_verify_bundled(bundled_dir: Path) -> None:
    code, out = _run(str(bundled_dir), "--backend", "python", "--json")
    data = json.loads(out)
    assert data["tasks"] > 0
    for kind, counts in data["checks"].items():
        assert counts["disagree"] == 0, (kind, data["disagreements"][:5])
        assert counts["unknown"] == 0, kind
    assert code == 0


@pytest.mark.parametrize("bad", ["--backend=nope"])
def test_bad_backend_option(tmp_path: Path, bad: str) -> None:
    write_task(tmp_path, "a")
    assert _run(str(tmp_path), bad)[0] == 2


class _Mixed(_BatchOnly):
    """A double offering the mixed-operation batch API (all checks in one call)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[str]] = []

    def evaluate_many(self, requests):
        self.requests.append([op for op, _ in requests])
        out = []
        for op, args in requests:
            if op == "classify":
                out.append(self.classify_many([args])[0])
            elif op == "postcondition_holds":
                out.append([Verdict.TRUE for _ in args[2]])
            else:
                out.append([Outcome(True, 7) for _ in args[2]])
        return out


def test_mixed_batch_api_is_used(tmp_path: Path) -> None:
    from veriscale.backends.datasets import load_benchmark

    for name in ("a", "b"):
        write_task(tmp_path, name)
    tasks, _ = load_benchmark(tmp_path)
    double = _Mixed()
    report = verify_tasks(double, tasks)  # type: ignore[arg-type]
    assert double.requests == [["classify"] * 2 + ["postcondition_holds"] * 2 + ["run"] * 2]
    assert report.checks["postcond_rejects_unexpected"].disagree == 6
    assert report.checks["reference_reproduces_expected"].agree == 2  # only 7 == 7


def test_verify_reuses_the_oracle_cache(bundled_dir: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERISCALE_ORACLE_CACHE", str(tmp_path / "oracle.sqlite"))
    args = (str(bundled_dir), "--backend", "python", "--tasks", "vs_argmax,vs_divmod", "--json")
    first = json.loads(_run(*args)[1])["oracle_cache"]
    second = json.loads(_run(*args)[1])["oracle_cache"]
    assert first["misses"] > 0 and first["hits"] == 0
    assert second["hits"] == first["misses"] and second["misses"] == 0
    assert json.loads(_run(*args, "--no-cache")[1])["oracle_cache"] == {"enabled": False}
