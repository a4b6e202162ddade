"""The OpenAI-compatible client against a local fake server: retries, cache, bound, accounting."""

from __future__ import annotations

import json
import threading

import pytest
from llm_fake_server import FakeOpenAI

from veriscale.llm.cache import ResponseCache, request_key
from veriscale.llm.client import ChatClient
from veriscale.llm.config import Endpoint, LLMConfig, load_llm_config

MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


def config(base_url: str, **kw: object) -> LLMConfig:
    data: dict = {
        "base_url": base_url,
        "api_key_env": "VS_TEST_LLM_KEY",
        "roles": {"seeds": "fake-model"},
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
        "max_attempts": 4,
        "prices": {"fake-model": {"input": 1.0, "output": 2.0}},
    }
    data.update(kw)
    return load_llm_config(data)


def test_complete_reads_text_usage_and_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VS_TEST_LLM_KEY", "sk-test-secret")
    with FakeOpenAI(lambda body, n: (200, f"answer to {body['messages'][-1]['content']}")) as srv:
        cfg = config(srv.base_url, temperature=0.2, seed=7)
        client = ChatClient(cfg)
        endpoint = cfg.endpoints("seeds")[0]
        resp = client.complete(endpoint, MSGS)
    assert resp.ok and resp.text == "answer to hi" and not resp.cached
    assert (resp.prompt_tokens, resp.completion_tokens) == (100, 20)
    body = srv.requests[0]
    assert body["model"] == "fake-model" and body["temperature"] == 0.2 and body["seed"] == 7
    assert not any(k.startswith("x_veriscale") for k in body)
    headers = {k.lower(): v for k, v in srv.headers[0].items()}
    assert headers["authorization"] == "Bearer sk-test-secret"
    usage = client.ledger.to_dict()
    assert usage["total"]["requests"] == 1
    assert usage["total"]["cost_usd"] == pytest.approx((100 * 1.0 + 20 * 2.0) / 1e6)
    assert "sk-test-secret" not in json.dumps(usage)


def test_retries_a_500_then_succeeds() -> None:
    def responder(body: dict, n: int) -> tuple[int, str]:
        return (500, "overloaded") if n == 0 else (200, "ok")

    with FakeOpenAI(responder) as srv:
        client = ChatClient(config(srv.base_url))
        resp = client.complete(client.config.endpoints("seeds")[0], MSGS)
    assert resp.ok and resp.text == "ok"
    assert len(srv.requests) == 2
    total = client.ledger.to_dict()["total"]
    assert total["retries"] == 1 and total["requests"] == 1 and total["errors"] == 0


def test_rate_limit_exhausts_attempts_and_is_recorded_not_raised() -> None:
    with FakeOpenAI(lambda body, n: (429, "slow down")) as srv:
        client = ChatClient(config(srv.base_url, max_attempts=3))
        resp = client.complete(client.config.endpoints("seeds")[0], MSGS)
    assert not resp.ok
    assert "429" in resp.error or "RateLimit" in resp.error
    assert len(srv.requests) == 3
    assert client.ledger.to_dict()["total"]["errors"] == 1


def test_client_error_is_not_retried() -> None:
    with FakeOpenAI(lambda body, n: (400, "bad request")) as srv:
        client = ChatClient(config(srv.base_url))
        resp = client.complete(client.config.endpoints("seeds")[0], MSGS)
    assert not resp.ok and len(srv.requests) == 1


def test_cache_hit_avoids_the_second_http_call(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VS_TEST_LLM_KEY", "sk-never-on-disk")
    path = tmp_path / "llm.sqlite"
    with FakeOpenAI(lambda body, n: (200, f"reply {n}")) as srv:
        cfg = config(srv.base_url)
        endpoint = cfg.endpoints("seeds")[0]
        first = ChatClient(cfg, ResponseCache(path))
        a = first.complete(endpoint, MSGS)
        b = first.complete(endpoint, MSGS)
        assert len(srv.requests) == 1
        assert b.cached and b.text == a.text == "reply 0"
        # Another round of the same question is a different request, hence a new answer.
        c = first.complete(endpoint, MSGS, variant=1)
        assert c.text == "reply 1" and len(srv.requests) == 2
        # A new client on the same file (a rerun) makes no request at all.
        second = ChatClient(cfg, ResponseCache(path))
        d = second.complete(endpoint, MSGS)
        assert d.cached and d.text == "reply 0" and len(srv.requests) == 2
    assert first.ledger.to_dict()["this_run"]["cache_hits"] == 1
    # the usage counters of both clients add up in the run directory's database
    assert second.ledger.to_dict()["total"]["cache_hits"] == 2
    assert b"sk-never-on-disk" not in path.read_bytes()


def test_cache_key_is_the_full_request() -> None:
    e1 = Endpoint(model="m", temperature=0.0)
    e2 = Endpoint(model="m", temperature=1.0)
    k = lambda e, m: request_key(ChatClient.build_request(e, m))  # noqa: E731
    assert k(e1, MSGS) == k(e1, [dict(m) for m in MSGS])
    assert k(e1, MSGS) != k(e2, MSGS)
    assert k(e1, MSGS) != k(Endpoint(model="n", temperature=0.0), MSGS)
    assert k(e1, MSGS) != k(e1, MSGS[:1])


def test_cache_is_safe_from_many_threads(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")

    def work(i: int) -> None:
        for j in range(20):
            key = f"{i}-{j}"
            cache.put(key, {"model": "m", "i": i}, {"text": key})
            assert cache.get(key) == {"text": key}

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 120


def test_concurrency_bound_is_respected() -> None:
    with FakeOpenAI(lambda body, n: (200, "ok"), delay=0.15) as srv:
        cfg = config(srv.base_url, concurrency=2)
        client = ChatClient(cfg)
        endpoint = cfg.endpoints("seeds")[0]
        prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(6)]
        # Nested fan-out must not exceed the bound either.
        out = client.map(lambda m: client.map(lambda x: client.complete(endpoint, x), [m]),
                         prompts)
    assert all(r[0].ok for r in out)
    assert len(srv.requests) == 6
    assert srv.max_inflight == 2


def test_offline_unless_a_model_is_configured() -> None:
    assert load_llm_config(None).offline
    assert load_llm_config({"provider": "offline", "roles": {"spec": ["a"]}}).offline
    cfg = load_llm_config({"roles": {"spec": ["a", {"model": "b", "temperature": 0.5}]},
                           "base_url": "http://x/v1", "temperature": 0.1})
    assert not cfg.offline
    specs = cfg.endpoints("spec")
    assert [e.model for e in specs] == ["a", "b"]
    assert [e.temperature for e in specs] == [0.1, 0.5]
    assert cfg.endpoints("redteam")[0].model == "a"  # borrowed
    with pytest.raises(ValueError):
        load_llm_config({"roles": {"poet": "x"}})
