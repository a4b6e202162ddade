"""The OpenAI-backed provider end to end against a local fake server, on a Python-spec task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_fake_server import FakeOpenAI, system_prompt

from veriscale.backends.datasets import load_benchmark
from veriscale.benchmark.model import Task
from veriscale.llm.offline import OfflineProvider
from veriscale.llm.provider import LLMProvider, make_provider

TASK_PY = """# veriscale: aux

# veriscale: precondition
def precondition(xs):
    return len(xs) > 0

# veriscale: reference
def reference(xs):
    best = 0
    for i, x in enumerate(xs):
        if x > xs[best]:
            best = i
    return best

# veriscale: postcondition
def postcondition(xs, result):
    return 0 <= result < len(xs) and xs[result] == max(xs)
"""


def write_task(root: Path) -> Task:
    d = root / "bench" / "max_index"
    d.mkdir(parents=True)
    (d / "task.json").write_text(json.dumps({
        "format": "veriscale-python/1", "id": "max_index",
        "signature": {"name": "maxIndex",
                      "parameters": [{"param_name": "xs", "param_type": "List Int"}],
                      "return_type": "Nat"},
        "description_file": "./description.txt", "code_file": "./task.py",
        "test_file": "./test.json", "reject_inputs_file": "./reject_inputs.json",
        "metadata": {},
    }))
    (d / "description.txt").write_text(
        "-----Description-----\nReturn an index of a largest element.\n"
        "-----Input-----\nxs: a non-empty list of integers.\n"
        "-----Output-----\nAn index i with xs[i] maximal.\n")
    (d / "task.py").write_text(TASK_PY)
    (d / "test.json").write_text(json.dumps([{"input": {"xs": [1, 3, 2]}, "expected": 1,
                                              "unexpected": [0]}]))
    (d / "reject_inputs.json").write_text(json.dumps([{"input": {"xs": []}}]))
    tasks, issues = load_benchmark(root / "bench")
    assert not issues, issues
    return tasks[0]


SEEDS = json.dumps([
    {"input": {"xs": [5, 5, 1]}}, {"input": {"xs": [2, 9, 9]}}, {"input": {"xs": [-1]}},
    {"input": {"xs": [7, 1, 7, 0]}}, {"input": {"xs": "not a list"}}, {"input": {"ys": [1]}},
])
SPEC = """```python
# Precondition Implementation
def precondition(xs):
    return len(xs) > 0
# Postcondition Implementation
def postcondition(xs, result):
    return 0 <= result < len(xs)
```"""
ADVERSARIES = """```python
# Adversarial Implementation 1
def maxIndex1(xs):
    return 0
# Adversarial Implementation 2
def _last(xs):
    return len(xs) - 1
def maxIndex2(xs):
    return _last(xs)
# Adversarial Implementation 3
import os
def maxIndex3(xs):
    return os.getpid() % len(xs)
# Adversarial Implementation 4
def maxIndex4(xs):
    m = max(xs)
    return max(i for i, x in enumerate(xs) if x == m)
```"""


def responder(body: dict, n: int) -> tuple[int, str]:
    system = system_prompt(body)
    attempt = body.get("x_veriscale_attempt")
    assert attempt is None  # the re-ask marker never reaches the endpoint
    if "propose test inputs" in system:
        return 200, "Here are inputs:\n```json\n" + SEEDS + "\n```"
    if "into a precise mathematical model" in system:
        return 200, "Input:\na. xs\nb. - non-empty (E)\nOutput:\na. res1\nb. - index of a max"
    if "precondition and the postcondition" in system:
        # The first answer is garbage; the re-ask gets a usable one.
        spec_calls = responder.spec_calls = getattr(responder, "spec_calls", 0) + 1
        return 200, ("I'd rather not." if spec_calls == 1 else SPEC)
    if "red teamer" in system:
        return 200, ADVERSARIES
    return 500, "unknown role"


@pytest.fixture()
def task(tmp_path: Path) -> Task:
    return write_task(tmp_path)


def make(base_url: str, tmp_path: Path) -> LLMProvider:
    provider = make_provider(
        {"base_url": base_url, "roles": {"seeds": "seed-model", "decompose": "dec-model",
                                         "spec": ["spec-model"], "redteam": "red-model"},
         "backoff_initial": 0.01, "parse_attempts": 3},
        seed=1, cache_path=tmp_path / "cache.sqlite",
    )
    assert isinstance(provider, LLMProvider)
    return provider


def test_make_provider_is_offline_without_endpoint() -> None:
    assert isinstance(make_provider(None), OfflineProvider)
    assert isinstance(make_provider({"provider": "offline"}), OfflineProvider)


def test_roles_through_the_fake_endpoint(task: Task, tmp_path: Path) -> None:
    responder.spec_calls = 0
    with FakeOpenAI(responder) as srv:
        provider = make(srv.base_url, tmp_path)
        seeds = provider.seed_inputs(task, 6)
        decomposition = provider.decompose(task)
        specs = provider.specifications(task, decomposition)
        advs = provider.adversaries(task, specs.specs[0], 4)
        n_requests = len(srv.requests)
        # The same calls again are served from the cache.
        again = make(srv.base_url, tmp_path)
        again.seed_inputs(task, 6)
        again.specifications(task, again.decompose(task))
        assert len(srv.requests) == n_requests

    assert list(seeds) == [(((5, 5, 1),), "llm:seed-model"), (((2, 9, 9),), "llm:seed-model"),
                           (((-1,),), "llm:seed-model"), (((7, 1, 7, 0),), "llm:seed-model")]
    assert seeds.ill_typed == 2
    assert decomposition.origin == "llm:dec-model" and "non-empty" in decomposition.input_model
    # the garbage answer was recorded and re-asked
    assert len(specs.specs) == 1 and specs.specs[0].origin == "llm:spec-model"
    assert any("attempt 1/3" in i for i in specs.issues)
    assert provider.usage.models["spec-model"].parse_failures == 1
    impls = advs.implementations
    assert len(impls) == 3  # the `import os` one is rejected as unsafe
    assert any("unsafe" in r for r in advs.rejected)
    assert all(i.origin == "llm:red-model" and i.target_spec == specs.specs[0].id for i in impls)
    assert all("def maxIndex(xs):" in i.code for i in impls)


def test_failures_fall_back_and_never_raise(task: Task, tmp_path: Path) -> None:
    with FakeOpenAI(lambda body, n: (200, "garbage")) as srv:
        provider = make(srv.base_url, tmp_path)
        seeds = provider.seed_inputs(task, 5)
        d = provider.decompose(task)
        specs = provider.specifications(task, d)
        advs = provider.adversaries(task, specs.specs[0], 5)
    assert len(seeds) == 0 and seeds.issues
    assert d.origin.startswith("offline-fallback")
    assert specs.specs and all(s.origin.startswith("offline:") for s in specs.specs)
    assert any("GT-derived" in i for i in specs.issues)
    assert advs.implementations and all(i.origin == "offline" for i in advs.implementations)
    with FakeOpenAI(lambda body, n: (503, "down")) as srv:
        provider = make(srv.base_url, tmp_path / "other")
        provider.config.max_attempts = 2
        assert len(provider.seed_inputs(task, 5)) == 0
        assert provider.usage.to_dict()["total"]["errors"] == 1


def test_llm_adversaries_flow_into_the_unexpected_stage(task: Task, tmp_path: Path) -> None:
    from veriscale.backends.registry import make_backend
    from veriscale.expansion.adversarial import generate_adversaries, synthesize_unexpected

    responder.spec_calls = 1  # answer the spec prompt at once
    backend = make_backend("python")
    try:
        with FakeOpenAI(responder) as srv:
            provider = make(srv.base_url, tmp_path)
            seeds = [inp for inp, prov in provider.seed_inputs(task, 6)]
            artifact = generate_adversaries(task, provider, backend, None)
        outs = backend.run(task, None, seeds)
        pairs = [(i, o.value) for i, o in zip(seeds, outs, strict=True) if o.ok]
        result = synthesize_unexpected(task, pairs, artifact, backend, None)
    finally:
        backend.close()
    assert artifact["counts"]["adversaries_tried"] == 3
    origins = {a["origin"] for a in result["adversaries"]}
    assert origins == {"llm:red-model"}
    killed = {rec["adversary"] for rec in result["kill_matrix"] if rec["killed"]}
    assert killed and killed <= {a["id"] for a in result["adversaries"]}
    # maxIndex4 returns another valid index on [5, 5, 1] / [7, 1, 7, 0]: never kept
    by_input = {json.dumps(r["input"]): r for r in result["rows"]}
    assert by_input[json.dumps({"xs": [7, 1, 7, 0]})]["unexpected"] == [3]
    assert result["counts"]["discarded_gt_accepts"] >= 1
