"""Issue 16 end to end: a run against the local server stops, falls back, resumes, accumulates.

What is asserted: which requests are made again, what the manifest and the
artifacts record, and that transport changes recompute nothing.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from llm_fake_server import FakeOpenAI, system_prompt
from rich.console import Console

from veriscale.backends.python.format import new_task_dir
from veriscale.llm.client import LLMUnavailable
from veriscale.pipeline.config import RunConfig
from veriscale.pipeline.run import run_pipeline

TASK_PY = """# veriscale: aux

# veriscale: precondition
def precondition(xs):
    return len(xs) > 0

# veriscale: reference
def reference(xs):
    return max(xs) + {k}

# veriscale: postcondition
def postcondition(xs, result):
    return result == max(xs) + {k}
"""

ANSWERS = {
    "propose test inputs": '[{"input": {"xs": [4, 5]}}, {"input": {"xs": [-3]}}]',
    "into a precise mathematical model": "Input:\na. xs\nb. non-empty (E)\nOutput:\na. res1",
    "precondition and the postcondition":
        "```python\ndef postcondition(xs, result):\n    return result >= max(xs)\n```",
    "red teamer": "```python\ndef top1(xs):\n    return max(xs) + 100\n```",
}


def answer(body: dict, n: int) -> tuple[int, str]:
    system = system_prompt(body)
    return next(((200, text) for key, text in ANSWERS.items() if key in system),
                (500, "unknown role"))


def bench(root: Path, n: int = 1) -> Path:
    for k in range(n):
        new_task_dir(root / "bench", f"top_{k}", "top", [("xs", "List Int")], "Int",
                     TASK_PY.replace("{k}", str(k)),
                     description="Return the maximum plus a constant.",
                     tests=[{"input": {"xs": [1, 3, 2]}, "expected": 3 + k}],
                     rejects=[{"input": {"xs": []}}])
    return root / "bench"


def config(url: str, **llm: object) -> RunConfig:
    return RunConfig.model_validate({
        "seed": 1,
        "llm": {"provider": "openai", "base_url": url, "roles": {"seeds": "m"},
                "backoff_initial": 0.001, "backoff_max": 0.01, "max_attempts": 2,
                "prices": {"m": {"input": 1.0, "output": 2.0}}, **llm},
        "mutation": {"max_mutations_per_input": 1},
        "report": {"time_evaluation": "off"},
    })


def run(b: Path, out: Path, cfg: RunConfig) -> dict:
    run_pipeline(b, out, cfg, console=Console(quiet=True))
    return json.loads((out / "manifest.json").read_text())


def artifact(out: Path, task: str, stage: str) -> dict:
    return json.loads((out / "tasks" / task / f"{stage}.json").read_text())


def test_dead_key_stops_the_run_and_the_fixed_rerun_asks_again(tmp_path: Path) -> None:
    b, out = bench(tmp_path), tmp_path / "run"
    with FakeOpenAI(lambda body, n: (401, "Incorrect API key provided")) as srv:
        with pytest.raises(LLMUnavailable, match="401"):
            run_pipeline(b, out, config(srv.base_url), console=Console(quiet=True))
        assert len(srv.requests) == 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["llm_usage"]["fallback"]["mode"] == "stop"
    assert not (out / "tasks/top_0/candidates.json").exists()  # nothing stored as final
    with FakeOpenAI(answer) as srv:  # the key is fixed
        manifest = run(b, out, config(srv.base_url))
        assert srv.requests
    cands = artifact(out, "top_0", "candidates")
    assert "llm_provisional" not in cands["data"]
    assert any(c["provenance"] == "llm:m" for c in cands["data"]["candidates"])
    assert manifest["errors"] == {}


def test_explicit_offline_fallback_is_loud_and_provisional(tmp_path: Path) -> None:
    b, out = bench(tmp_path), tmp_path / "run"
    with FakeOpenAI(lambda body, n: (401, "Incorrect API key provided")) as srv:
        manifest = run(b, out, config(srv.base_url, fallback="offline"))
        assert len(srv.requests) == 1
    assert manifest["llm_usage"]["fallback"]["mode"] == "offline"
    assert "401" in manifest["llm_usage"]["fallback"]["reason"]
    assert artifact(out, "top_0", "candidates")["data"]["llm_provisional"]
    report = (out / "report.md").read_text()
    assert "OFFLINE" in report and "401" in report
    with FakeOpenAI(answer) as srv:  # next run: the endpoint works, the stages are redone
        manifest = run(b, out, config(srv.base_url, fallback="offline"))
        assert srv.requests
    assert "llm_provisional" not in artifact(out, "top_0", "candidates")["data"]
    assert "fallback" not in manifest["llm_usage"]


def test_reruns_cost_nothing_and_transport_changes_recompute_nothing(tmp_path: Path) -> None:
    b, out = bench(tmp_path), tmp_path / "run"
    with FakeOpenAI(answer) as srv:
        first = run(b, out, config(srv.base_url))
        asked = len(srv.requests)
        assert asked
        again = run(b, out, config(srv.base_url))
        assert len(srv.requests) == asked  # identical rerun: zero requests
    with FakeOpenAI(answer) as other:  # another base_url, timeout, concurrency, prices
        moved = run(b, out, config(other.base_url, timeout=17, concurrency=9,
                                   prices={"m": {"input": 5.0, "output": 5.0}}))
        assert other.requests == []
    assert all(v == 1 for v in moved["resumed_tasks"].values()), moved["resumed_tasks"]
    u1, u2 = first["llm_usage"], again["llm_usage"]
    assert u1["this_run"]["requests"] == asked == u2["total"]["requests"]
    assert u2["this_run"]["requests"] == 0  # cumulative totals survive the rerun
    assert u2["total"]["cost_usd"] == u1["total"]["cost_usd"] > 0
    assert moved["llm_usage"]["total"]["requests"] == asked


def test_requests_run_concurrently_across_tasks(tmp_path: Path) -> None:
    b, out = bench(tmp_path, n=3), tmp_path / "run"
    two_in_flight = threading.Barrier(2, timeout=20)

    def gated(body: dict, n: int) -> tuple[int, str]:
        if n < 2:  # the first two requests (two different tasks) must overlap to pass
            try:
                two_in_flight.wait()
            except threading.BrokenBarrierError:
                return 500, "the second request never came while the first was open"
        return answer(body, n)

    with FakeOpenAI(gated) as srv:
        manifest = run(b, out, config(srv.base_url, concurrency=2, max_attempts=1))
        assert srv.max_inflight == 2  # bounded by concurrency, and reached
    assert manifest["errors"] == {}
    assert all("llm_provisional" not in artifact(out, f"top_{k}", "candidates")["data"]
               for k in range(3))


def _cli_config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "llm.toml"
    path.write_text(f'seed = 1\n[llm]\nprovider = "openai"\nbase_url = "{url}"\n'
                    'backoff_initial = 0.001\nbackoff_max = 0.01\nmax_attempts = 2\n'
                    '[llm.roles]\nseeds = "m"\n[mutation]\nmax_mutations_per_input = 1\n'
                    '[report]\ntime_evaluation = "off"\n')
    return path


def test_partial_failures_end_loud_and_the_rerun_asks_only_them(tmp_path: Path) -> None:
    """Some requests fail (HTTP 500 past the retries): the run finishes, names the
    provisional records with the statuses and the command to retry, exits 6; the
    per-task LLM table marks them; the rerun asks only those records again."""
    from click.testing import CliRunner

    from veriscale.cli import main

    b = bench(tmp_path, n=2)
    (b / "top_1" / "description.txt").write_text("Return the maximum plus one.\n")

    def flaky(body: dict, n: int) -> tuple[int, str]:
        text = json.dumps(body)  # top_1's seed requests (fewer than trip the breaker)
        if "plus one" in text and "propose test inputs" in text:
            return 500, "internal error"
        return answer(body, n)

    out = tmp_path / "run"
    with FakeOpenAI(flaky) as srv:
        res = CliRunner().invoke(main, ["run", str(b), "--out", str(out), "--config",
                                        str(_cli_config(tmp_path, srv.base_url))])
    assert res.exit_code == 6, res.output
    assert "provisional records" in res.output and "stage candidates" in res.output
    assert "500" in res.output and "rerun the same command" in res.output
    provisional = json.loads((out / "manifest.json").read_text())["llm_provisional"]
    assert set(provisional) == {"top_1"} and "candidates" in provisional["top_1"]
    report = (out / "report.md").read_text()
    assert "| top_1 | seeds | 40 | 0 | 0 | 0 | 0 | 0 | 1 | 0 (provisional) |" in report
    assert "| top_1 | spec |" in report and "| top_0 | seeds | 40 | 2 | 2 |" in report
    assert report.count("(provisional)") == 1  # only the record that was
    with FakeOpenAI(answer) as srv:
        res = CliRunner().invoke(main, ["run", str(b), "--out", str(out), "--config",
                                        str(_cli_config(tmp_path, srv.base_url))])
        asked = len(srv.requests)
    assert res.exit_code == 0, res.output
    assert asked >= 1 and "1 of 2 tasks resumed" in res.output  # only top_1 asked again
    assert "when computed" in res.output  # a resumed stage: this run's time and the first


def test_the_dead_key_hint_keeps_its_brackets(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from veriscale.cli import main

    with FakeOpenAI(lambda body, n: (401, "Incorrect API key provided")) as srv:
        res = CliRunner().invoke(main, ["run", str(bench(tmp_path)), "--out",
                                        str(tmp_path / "run"), "--config",
                                        str(_cli_config(tmp_path, srv.base_url))])
    assert res.exit_code == 4, res.output
    assert "fix [llm] (key, model, base_url)" in res.output
    assert 'fallback = "offline" in [llm]' in res.output
