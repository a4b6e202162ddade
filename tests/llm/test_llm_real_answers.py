"""Issue 16: answers the way real models and endpoints give them, one scripted case each.

Every test asserts what is kept, what is recorded and what is asked again.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_fake_server import FakeOpenAI, Reply, system_prompt, user_prompt

from veriscale.backends.answers import ParseError, split_reasoning
from veriscale.backends.python.answers import parse_python_spec
from veriscale.backends.python.format import new_task_dir
from veriscale.benchmark.model import Signature, Task
from veriscale.llm import prompts
from veriscale.llm.cache import ResponseCache
from veriscale.llm.client import (
    ChatClient,
    LLMUnavailable,
    RetryAfterWait,
    read_completion,
    retry_after_seconds,
)
from veriscale.llm.config import load_llm_config
from veriscale.llm.parsers import parse_adversaries, parse_decomposition, parse_inputs
from veriscale.llm.provider import CONTINUE, LLMProvider, make_provider

SIG = Signature.from_json({"name": "maxIndex", "parameters": [
    {"param_name": "xs", "param_type": "List Int"}], "return_type": "Nat"})
SIG_S = Signature.from_json({"name": "f", "parameters": [
    {"param_name": "s", "param_type": "String"}], "return_type": "Nat"})

TASK_PY = """# veriscale: aux

# veriscale: precondition
def precondition(xs):
    return len(xs) > 0

# veriscale: reference
def reference(xs):
    return max(range(len(xs)), key=lambda i: (xs[i], -i))

# veriscale: postcondition
def postcondition(xs, result):
    return 0 <= result < len(xs) and all(xs[result] >= x for x in xs)
"""

SPEC = """```python
def postcondition(xs, result):
    return 0 <= result < len(xs)
```"""


def items(*lists: list) -> str:
    return json.dumps([{"input": {"xs": x}} for x in lists])


def write_task(tmp: Path) -> Task:
    from veriscale.backends.datasets import load_benchmark

    new_task_dir(tmp / "bench", "max_index", "maxIndex", [("xs", "List Int")], "Nat", TASK_PY,
                 description="-----Description-----\nIndex of a maximum.\n-----Input-----\n"
                 "xs: non-empty.\n-----Output-----\nAn index.\n",
                 tests=[{"input": {"xs": [2, 7, 11, 15]}, "expected": 3, "unexpected": [0]}])
    tasks, _ = load_benchmark(tmp / "bench")
    return tasks[0]


@pytest.fixture()
def task(tmp_path: Path) -> Task:
    return write_task(tmp_path)


def provider(url: str, tmp: Path | None = None, **kw: object) -> LLMProvider:
    data: dict = {"base_url": url, "roles": {"seeds": "m", "decompose": "m", "spec": ["m"],
                                             "redteam": "m"},
                  "backoff_initial": 0.001, "backoff_max": 0.01, "max_attempts": 3,
                  "prices": {"m": {"input": 1.0, "output": 2.0}}}
    data.update(kw)
    p = make_provider(data, cache_path=None if tmp is None else tmp / "cache.sqlite")
    assert isinstance(p, LLMProvider)
    p.notify = lambda message: None
    return p


# ====================================================================== reasoning


def test_think_draft_is_set_aside_and_the_real_array_is_kept() -> None:
    text = ("<think>Maybe just one: [{\"input\": {\"xs\": [1]}}]. No, eight.</think>\n"
            + items([1, 2], [3], [0, 0], [-1, 5], [9, 9, 9], [4, 3], [7], [2, 2, 1]))
    parsed = parse_inputs(text, SIG)
    assert len(parsed.inputs) == 8 and ((1,),) not in parsed.inputs
    assert parsed.proposed == 8


def test_reasoning_variants_are_split_off() -> None:
    assert split_reasoning("<reasoning>x</reasoning>answer") == ("answer",
                                                                 "<reasoning>x</reasoning>")
    assert split_reasoning("thinking without an opening tag</think>final")[0] == "final"
    assert split_reasoning("final<think>cut while thinking")[0] == "final"


def test_decomposition_ignores_the_thinking_and_takes_the_final_sections() -> None:
    text = ("<think>the input: some list; the output: something</think>\n"
            "Input:\na. xs : List Int\nb. non-empty (E)\nOutput:\na. res1 : Nat\nb. an index")
    d = parse_decomposition(text)
    assert "non-empty" in d.input_model and "an index" in d.output_model
    drafts = ("Draft\nInput:\nold in\nOutput:\nold out\n\nFinal answer\nInput:\nnew in\n"
              "Output:\nnew out")
    d2 = parse_decomposition(drafts)
    assert (d2.input_model, d2.output_model) == ("new in", "new out")


def test_a_fence_inside_think_does_not_spoil_the_spec() -> None:
    text = ("<think>```python\ndef postcondition(xs):\n    pass\n```</think>\n" + SPEC)
    spec = parse_python_spec(text, SIG)
    assert "0 <= result < len(xs)" in spec.postcond and "pass" not in spec.postcond


def test_reasoning_content_field_is_kept_apart() -> None:
    body = json.dumps({"choices": [{"finish_reason": "stop", "message": {
        "content": "[]", "reasoning_content": "let me think [1]"}}]})
    got = read_completion(body)
    assert got.text == "[]" and got.reasoning == "let me think [1]"


# ====================================================================== arrays and salvage


def test_valid_and_invalid_arrays_are_both_read() -> None:
    text = f"Likely valid: {items([1, 2], [5])}\nLikely invalid: {items([], [])}"
    parsed = parse_inputs(text, SIG)
    assert parsed.inputs == [((1, 2),), ((5,),), ((),)]
    assert parsed.dropped == {"duplicate": 1}


def test_python_repr_and_json_with_comments_are_salvaged() -> None:
    repr_text = "[{'input': {'xs': [1, 2]}}, {'input': {'xs': [3]}},]"
    assert parse_inputs(repr_text, SIG).inputs == [((1, 2),), ((3,),)]
    commented = ('[\n  // boundary\n  {"input": {"xs": [0]}}, /* empty */ {"input": {"xs": []}},'
                 '\n  {"input": {"xs": [1]}}, # python-style\n]')
    assert parse_inputs(commented, SIG).inputs == [((0,),), ((),), ((1,),)]


def test_a_truncated_array_keeps_its_complete_items() -> None:
    text = items([1], [2], [3])[:-20]
    parsed = parse_inputs(text, SIG)
    assert parsed.inputs == [((1,),), ((2,),)]


def test_seed_values_are_json_not_verina_escapes() -> None:
    parsed = parse_inputs(json.dumps([{"input": {"s": "C:\\new\\table"}}]), SIG_S)
    assert parsed.inputs == [("C:\\new\\table",)]


def test_seed_prompt_shows_values_as_json(task: Task) -> None:
    user = prompts.seed_messages(task, 4)[1]["content"]
    assert '{"xs": [2, 7, 11, 15]}' in user and '"[2, 7, 11, 15]"' not in user


def test_every_dropped_seed_has_a_reason() -> None:
    text = json.dumps([{"input": {"xs": [1]}}, {"input": {"xs": "oops"}},
                       {"input": {"ys": [1]}}, {"input": {"xs": [1]}}, {"other": 1}])
    parsed = parse_inputs(text, SIG)
    assert parsed.inputs == [((1,),)] and parsed.proposed == 5
    assert parsed.dropped == {"ill_typed": 1, "wrong_keys": 1, "duplicate": 1,
                              "not_an_input": 1}
    assert len(parsed.reasons) == 4


# ====================================================================== fences and helpers


def test_an_extra_usage_fence_is_not_merged_into_the_spec() -> None:
    text = (SPEC + "\n\nUsage:\n```python\nprint(postcondition([1, 2], 1))\nassert check()\n```")
    spec = parse_python_spec(text, SIG)
    assert "print" not in spec.postcond and "check" not in spec.postcond


def test_a_helper_in_its_own_fence_is_kept() -> None:
    text = ("```python\ndef in_range(i, xs):\n    return 0 <= i < len(xs)\n```\n"
            "```python\ndef postcondition(xs, result):\n    return in_range(result, xs)\n```")
    spec = parse_python_spec(text, SIG)
    assert "def in_range" in spec.postcond


def test_redteam_helpers_before_the_first_marker_go_with_each_user() -> None:
    text = """```python
def _last(xs):
    return len(xs) - 1
# Adversarial Implementation 1
def maxIndex1(xs):
    return _last(xs)
# Adversarial Implementation 2
def maxIndex2(xs):
    return 0
# Adversarial Implementation 3
def maxIndex3(xs):
    return _last(xs) // 2
```"""
    parsed = parse_adversaries(text, SIG, "python")
    codes = [i.code for i in parsed.implementations]
    assert len(codes) == 3 and parsed.rejected == []
    assert "def _last" in codes[0] and "def _last" in codes[2] and "def _last" not in codes[1]
    namespace: dict = {}
    exec(codes[2], namespace)  # the adversary runs: no NameError
    assert namespace["maxIndex"]([1, 2, 3, 4, 5]) == 2


def test_truncated_fifth_fence_keeps_four_adversaries() -> None:
    fences = [f"```python\ndef maxIndex{i}(xs):\n    return {i} % len(xs)\n```" for i in range(5)]
    text = "\n".join(fences)[:-30]
    parsed = parse_adversaries(text, SIG, "python", truncated=True)
    assert len(parsed.implementations) == 4
    assert any("token limit" in r for r in parsed.rejected)


# ====================================================================== transport


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"retry-after": "30"}) == 30.0
    assert retry_after_seconds({"retry-after-ms": "1500"}) == 1.5
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 1970 00:01:00 GMT"}, now=0.0) == 60
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None


def test_backoff_is_jittered_but_never_below_retry_after() -> None:
    wait = RetryAfterWait(initial=1.0, maximum=60.0)

    def state(attempt: int, headers: dict) -> SimpleNamespace:
        exc = SimpleNamespace(response=SimpleNamespace(headers=headers))
        outcome = SimpleNamespace(exception=lambda: exc)
        return SimpleNamespace(attempt_number=attempt, outcome=outcome)

    waits = {wait(state(3, {})) for _ in range(50)}
    assert len(waits) > 1 and all(0 <= w <= 4.0 for w in waits)  # full jitter, 2**(3-1) cap
    assert all(wait(state(1, {"retry-after": "30"})) >= 30.0 for _ in range(20))


def test_retry_after_longer_than_the_deadline_gives_up_at_once() -> None:
    reply = Reply(429, "slow down", headers={"Retry-After": "30"})
    with FakeOpenAI(lambda body, n: reply) as srv:
        p = provider(srv.base_url, max_attempts=8, request_deadline=5.0)
        resp = p.client.complete(p.config.endpoints("seeds")[0], [{"role": "user",
                                                                  "content": "x"}])
    assert not resp.ok and "429" in resp.error
    assert len(srv.requests) == 1  # waiting 30 s would pass the 5 s deadline


def test_retry_after_is_waited_then_the_request_succeeds() -> None:
    def answer(body: dict, n: int) -> Reply:
        return Reply(429, "busy", headers={"Retry-After": "0.05"}) if n < 2 else Reply(
            content="ok")

    with FakeOpenAI(answer) as srv:
        p = provider(srv.base_url, max_attempts=5)
        resp = p.client.complete(p.config.endpoints("seeds")[0], [{"role": "user",
                                                                  "content": "x"}])
    assert resp.ok and resp.text == "ok" and len(srv.requests) == 3
    assert p.usage.models["m"].retries == 2


def test_request_parameters_per_role() -> None:
    with FakeOpenAI(lambda body, n: (200, "ok")) as srv:
        cfg = load_llm_config({
            "base_url": srv.base_url, "temperature": 0.3, "seed": 11,
            "extra_headers": {"X-Team": "veriscale"},
            "roles": {"seeds": {"model": "reasoner", "max_completion_tokens": 4000,
                                "reasoning_effort": "low", "extra_body": {"top_k": 20}},
                      "spec": {"model": "classic", "max_tokens": 900, "temperature": 0.0}},
        })
        client = ChatClient(cfg)
        client.complete(cfg.endpoints("seeds")[0], [{"role": "user", "content": "a"}])
        client.complete(cfg.endpoints("spec")[0], [{"role": "user", "content": "b"}])
    seeds, spec = srv.requests
    assert seeds["max_completion_tokens"] == 4000 and "max_tokens" not in seeds
    assert seeds["reasoning_effort"] == "low" and seeds["top_k"] == 20
    assert seeds["temperature"] == 0.3 and seeds["seed"] == 11
    assert spec["max_tokens"] == 900 and spec["temperature"] == 0.0
    assert "max_completion_tokens" not in spec and "reasoning_effort" not in spec
    assert all({k.lower(): v for k, v in h.items()}["x-team"] == "veriscale"
               for h in srv.headers)


def test_sse_body_is_read_not_cached_as_empty(tmp_path: Path) -> None:
    with FakeOpenAI(lambda body, n: Reply(content="streamed answer", sse=True)) as srv:
        p = provider(srv.base_url, tmp_path)
        e = p.config.endpoints("seeds")[0]
        first = p.client.complete(e, [{"role": "user", "content": "x"}])
        again = p.client.complete(e, [{"role": "user", "content": "x"}])
    assert first.text == "streamed answer" and first.prompt_tokens == 100
    assert again.cached and again.text == "streamed answer" and len(srv.requests) == 1


def test_missing_usage_and_unpriced_models_are_flagged() -> None:
    with FakeOpenAI(lambda body, n: Reply(content="ok", usage=None)) as srv:
        p = provider(srv.base_url, roles={"seeds": "free-model"}, prices={})
        p.client.complete(p.config.endpoints("seeds")[0], [{"role": "user", "content": "x"}])
    usage = p.usage.to_dict()
    assert usage["total"]["usage_missing"] == 1
    assert usage["unpriced_models"] == ["free-model"] and "lower bound" in usage["cost_note"]
    assert usage["models"]["free-model"]["priced"] is False


# ====================================================================== failures


def test_a_failed_request_is_not_cached_and_is_asked_again(tmp_path: Path) -> None:
    with FakeOpenAI(lambda body, n: (500, "down") if n == 0 else (200, "fine")) as srv:
        p = provider(srv.base_url, tmp_path, max_attempts=1)
        e = p.config.endpoints("seeds")[0]
        assert not p.client.complete(e, [{"role": "user", "content": "x"}]).ok
        again = p.client.complete(e, [{"role": "user", "content": "x"}])
    assert again.ok and not again.cached and len(srv.requests) == 2


@pytest.mark.parametrize("status,words", [(401, "authentication failed (HTTP 401)"),
                                          (403, "authentication failed (HTTP 403)"),
                                          (404, "not found (HTTP 404)")])
def test_auth_and_missing_model_stop_at_once(task: Task, tmp_path: Path, status: int,
                                             words: str) -> None:
    with FakeOpenAI(lambda body, n: (status, "invalid api key or model")) as srv:
        p = provider(srv.base_url, tmp_path)
        with pytest.raises(LLMUnavailable, match=re.escape(words)):
            p.seed_inputs(task, 4)
        with pytest.raises(LLMUnavailable):
            p.decompose(task)  # no second request to a dead endpoint
    assert len(srv.requests) == 1
    assert len(ResponseCache(tmp_path / "cache.sqlite")) == 0
    assert p.take_request_failures(task.id)


def test_an_endpoint_failing_every_request_stops(task: Task) -> None:
    with FakeOpenAI(lambda body, n: (400, "Unsupported parameter: 'max_tokens'")) as srv:
        p = provider(srv.base_url, max_tokens=100, max_consecutive_failures=3)
        with pytest.raises(LLMUnavailable, match=r"3 requests in a row failed.*max_tokens"):
            for _ in range(5):
                p.seed_inputs(task, 4, round_index=_)
    assert len(srv.requests) == 3  # 400 is not retried; the third failure trips


def test_offline_fallback_is_loud_and_recorded(task: Task) -> None:
    notices: list[str] = []
    with FakeOpenAI(lambda body, n: (401, "bad key")) as srv:
        p = provider(srv.base_url, fallback="offline")
        p.notify = notices.append
        seeds = p.seed_inputs(task, 4)
        specs = p.specifications(task)
    assert len(srv.requests) == 1
    assert len(seeds) > 0 and all(prov == "seed:offline" for _, prov in seeds)
    assert specs.specs and all(s.origin.startswith("offline") for s in specs.specs)
    assert len(notices) == 1 and "OFFLINE" in notices[0] and "401" in notices[0]
    assert p.usage.to_dict()["fallback"]["mode"] == "offline"
    assert p.take_request_failures(task.id)  # nothing of this task is final


# ====================================================================== truncation and re-asks


def test_truncated_spec_is_reasked_with_a_bigger_budget(task: Task) -> None:
    cut = "```python\ndef postcondition(xs, result):\n    return 0 <= result"

    def answer(body: dict, n: int) -> Reply:
        if "precondition and the postcondition" not in system_prompt(body):
            return Reply(content="Input:\na\nOutput:\nb")
        if body["max_tokens"] < 400:
            return Reply(content=cut, finish_reason="length")
        return Reply(content=SPEC)

    with FakeOpenAI(answer) as srv:
        p = provider(srv.base_url, max_tokens=100, parse_attempts=3)
        result = p.specifications(task)
    spec_requests = [b for b in srv.requests if "postcondition" in system_prompt(b)]
    assert [b["max_tokens"] for b in spec_requests] == [100, 200, 400]
    assert result.specs and result.specs[0].origin == "llm:m"
    assert any("finish_reason=length" in i for i in result.issues)
    assert p.usage.models["m"].reasks == 2 and p.usage.models["m"].truncated == 2
    assert result.llm["reasks"] == 2


def test_truncated_without_budget_asks_to_continue(task: Task) -> None:
    first = "```python\ndef postcondition(xs, result):\n"
    rest = "    return 0 <= result < len(xs)\n```"

    def answer(body: dict, n: int) -> Reply:
        if "precondition and the postcondition" not in system_prompt(body):
            return Reply(content="Input:\na\nOutput:\nb")
        last = body["messages"][-1]["content"]
        return Reply(content=rest) if last == CONTINUE else Reply(content=first,
                                                                 finish_reason="length")

    with FakeOpenAI(answer) as srv:
        p = provider(srv.base_url)
        result = p.specifications(task)
    assert result.specs and "0 <= result < len(xs)" in result.specs[0].postcond
    cont = [b for b in srv.requests if b["messages"][-1]["content"] == CONTINUE]
    assert len(cont) == 1 and cont[0]["messages"][-2] == {"role": "assistant",
                                                          "content": first}


def test_empty_answer_is_reasked_with_a_changed_request_and_not_cached(
        task: Task, tmp_path: Path) -> None:
    def answer(body: dict, n: int) -> Reply:
        if len(body["messages"]) == 2:
            return Reply(content=None, reasoning="thought for too long")
        return Reply(content=items([1], [2]))

    with FakeOpenAI(answer) as srv:
        p = provider(srv.base_url, tmp_path)
        seeds = p.seed_inputs(task, 2)
    assert len(seeds) == 2 and len(srv.requests) == 2
    assert srv.requests[0] != srv.requests[1]
    assert "could not be used" in srv.requests[1]["messages"][-1]["content"]
    assert len(ResponseCache(tmp_path / "cache.sqlite")) == 1  # only the usable answer
    assert any("empty answer" in i for i in seeds.issues)


def test_paid_reasks_are_bounded(task: Task) -> None:
    with FakeOpenAI(lambda body, n: (200, "no idea")) as srv:
        p = provider(srv.base_url, parse_attempts=2, fallback_offline=False)
        result = p.specifications(task)
    spec_requests = [b for b in srv.requests if "postcondition" in system_prompt(b)]
    assert len(spec_requests) == 2 and not result.specs
    assert result.llm == {"asked": 1, "kept": 0, "reasks": 1, "dropped": {"unusable": 1}}


def test_truncated_redteam_answer_keeps_complete_adversaries(task: Task) -> None:
    fences = "\n".join(f"```python\ndef maxIndex{i}(xs):\n    return {i} % len(xs)\n```"
                       for i in range(5))

    def answer(body: dict, n: int) -> Reply:
        if "red teamer" in system_prompt(body):
            return Reply(content=fences[:-30], finish_reason="length")
        return Reply(content=SPEC)

    with FakeOpenAI(answer) as srv:
        p = provider(srv.base_url)
        spec = p.specifications(task).specs[0]
        advs = p.adversaries(task, spec, 5)
    assert len(advs.implementations) == 4
    assert advs.llm["kept"] == 4 and advs.llm["dropped"] == {"truncated": 1}
    assert sum(1 for b in srv.requests if "red teamer" in system_prompt(b)) == 1


def test_seed_accounting_counts_asked_proposed_kept_dropped(task: Task) -> None:
    text = json.dumps([{"input": {"xs": [1]}}, {"input": {"xs": "bad"}},
                       {"input": {"xs": [1]}}, {"input": {"xs": [2, 7, 11, 15]}}])
    with FakeOpenAI(lambda body, n: (200, text)) as srv:
        seeds = provider(srv.base_url).seed_inputs(task, 4)
        assert "[2, 7, 11, 15]" in user_prompt(srv.requests[0])
    assert seeds.llm["asked"] == 4 and seeds.llm["proposed"] == 4
    assert seeds.llm["kept"] == 2
    assert seeds.llm["dropped"] == {"ill_typed": 1, "duplicate": 1}


# ====================================================================== fingerprints


def test_transport_settings_do_not_change_the_result_settings() -> None:
    base = {"roles": {"spec": ["a", "b"]}, "temperature": 0.2}
    ref = load_llm_config(base).result_settings()
    for change in ({"timeout": 5}, {"concurrency": 32}, {"base_url": "http://x/v1"},
                   {"prices": {"a": {"input": 3}}}, {"max_attempts": 2},
                   {"request_deadline": 60}, {"extra_headers": {"X": "y"}},
                   {"roles": {"spec": [{"model": "a", "base_url": "http://y"}, "b"]}}):
        assert load_llm_config({**base, **change}).result_settings() == ref, change
    for change in ({"temperature": 0.9}, {"roles": {"spec": ["a"]}}, {"max_tokens": 10},
                   {"reasoning_effort": "high"}, {"parse_attempts": 1}):
        assert load_llm_config({**base, **change}).result_settings() != ref, change


def test_prose_apostrophes_do_not_hide_comments() -> None:
    text = ("Here's what I'd propose:\n[\n  // valid\n  {\"input\": {\"xs\": [1]}},\n"
            "  {'input': {'xs': [2]}}\n]")
    assert parse_inputs(text, SIG).inputs == [((1,),), ((2,),)]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="[]{}\"',:#/*<>think 0123456789xsinput\n`\\", max_size=120))
def test_reading_seeds_never_raises_anything_but_parse_error(text: str) -> None:
    answer, _ = split_reasoning(text)
    assert split_reasoning(answer)[0] == answer  # setting reasoning aside is idempotent
    with contextlib.suppress(ParseError):
        parse_inputs(text, SIG)


def test_an_extra_lean_fence_is_not_merged_into_the_spec() -> None:
    from veriscale.backends.lean.answers import parse_lean_spec

    text = ("```lean\ndef maxIndex_postcond (xs : List Int) (result : Nat) "
            "(h_precond : maxIndex_precond (xs)) : Prop :=\n  result < xs.length\n```\n"
            "Check it:\n```lean\ndef check_it : Bool := true\n#eval check_it\n```")
    spec = parse_lean_spec(text, SIG)
    assert spec.postcond.strip() == "result < xs.length"
    assert "check_it" not in spec.postcond_aux


def test_usage_of_a_killed_run_is_kept_by_the_next(tmp_path: Path) -> None:
    msgs = [{"role": "user", "content": "x"}]
    with FakeOpenAI(lambda body, n: (200, f"answer {n}")) as srv:
        killed = provider(srv.base_url, tmp_path)
        e = killed.config.endpoints("seeds")[0]
        killed.client.complete(e, msgs)
        killed.client.complete(e, [{"role": "user", "content": "y"}])
        # no manifest was written: the process died here
        resumed = provider(srv.base_url, tmp_path)
        resumed.client.complete(e, msgs)  # answered by the cache
        resumed.client.complete(e, [{"role": "user", "content": "z"}])
    usage = resumed.usage.to_dict()
    assert usage["this_run"]["requests"] == 1 and usage["this_run"]["cache_hits"] == 1
    assert usage["total"]["requests"] == 3 and usage["total"]["cache_hits"] == 1
    assert usage["total"]["cost_usd"] == pytest.approx(3 * (100 * 1.0 + 20 * 2.0) / 1e6)
    assert usage["total"]["cached_prompt_tokens"] == 100
