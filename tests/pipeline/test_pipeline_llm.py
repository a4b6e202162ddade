"""A run whose LLM is a local OpenAI-compatible server: LLM seeds and adversaries flow in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llm_fake_server import FakeOpenAI, system_prompt

from veriscale.backends.python.format import new_task_dir
from veriscale.pipeline.config import RunConfig
from veriscale.pipeline.run import run_pipeline

TASK_PY = """# veriscale: aux

# veriscale: precondition
def precondition(xs):
    return len(xs) > 0

# veriscale: reference
def reference(xs):
    return max(xs)

# veriscale: postcondition
def postcondition(xs, result):
    return result in xs and all(x <= result for x in xs)
"""

SEEDS = [{"input": {"xs": [40, 41, 42]}}, {"input": {"xs": []}},
         {"input": {"xs": "garbage"}}, {"input": {"zs": [1]}}]
SPEC = """```python
# Precondition Implementation
def precondition(xs):
    return True
# Postcondition Implementation
def postcondition(xs, result):
    return all(x <= result for x in xs)
```"""
ADVERSARIES = """```python
# Adversarial Implementation 1
def maxOf1(xs):
    return 10 ** 9
# Adversarial Implementation 2
def maxOf2(xs):
    return max(xs) + 1
```"""


def responder(body: dict, n: int) -> tuple[int, str]:
    system = system_prompt(body)
    if "propose test inputs" in system:
        return 200, json.dumps(SEEDS)
    if "into a precise mathematical model" in system:
        return 200, "Input:\na. xs\nb. - non-empty (E)\nOutput:\na. res1\nb. - the maximum"
    if "precondition and the postcondition" in system:
        return 200, SPEC
    if "red teamer" in system:
        return 200, "Sorry, I cannot help." if n % 2 else ADVERSARIES
    return 500, "unknown role"


def write_benchmark(root: Path) -> Path:
    new_task_dir(
        root / "bench", "max_of", "maxOf", [("xs", "List Int")], "Int", TASK_PY,
        description="-----Description-----\nReturn the largest element.\n-----Input-----\n"
        "xs: a non-empty list of integers.\n-----Output-----\nThe maximum of xs.\n",
        tests=[{"input": {"xs": [1, 3, 2]}, "expected": 3, "unexpected": [2]}],
        rejects=[{"input": {"xs": []}}],
    )
    return root / "bench"


def test_llm_seeds_and_adversaries_reach_the_suite(tmp_path: Path):
    bench = write_benchmark(tmp_path)
    with FakeOpenAI(responder) as server:
        config = RunConfig.model_validate({
            "seed": 3,
            "llm": {"provider": "openai", "base_url": server.base_url,
                    "roles": {"seeds": "seed-m", "decompose": "dec-m", "spec": ["spec-m"],
                              "redteam": "red-m"},
                    "backoff_initial": 0.01, "parse_attempts": 3},
            "mutation": {"max_mutations_per_input": 2},
        })
        result = run_pipeline(bench, tmp_path / "run", config, console=Console(quiet=True))
        assert server.requests, "the LLM was never asked"
    assert result.errors == {}
    run = tmp_path / "run"
    cands = json.loads((run / "tasks/max_of/candidates.json").read_text())["data"]
    provenance = {tuple(c["input"]["xs"]): c["provenance"] for c in cands["candidates"]}
    assert provenance[(40, 41, 42)] == "llm:seed-m"
    assert provenance[(1, 3, 2)] == "original:test"
    advs = json.loads((run / "tasks/max_of/adversaries.json").read_text())["data"]
    origins = {a["origin"] for a in advs["adversaries"]}
    assert "llm:red-m" in origins
    unexp = json.loads((run / "tasks/max_of/unexpected.json").read_text())["data"]
    llm_ids = {a["id"] for a in advs["adversaries"] if a["origin"] == "llm:red-m"}
    assert any(c["adversary"] in llm_ids and c["killed"] for c in unexp["kill_matrix"])
    plus = json.loads((run / "plus/max_of/test.json").read_text())
    row = next(r for r in plus if r["input"] == {"xs": "[40, 41, 42]"})
    assert 10 ** 9 in row["unexpected"] and 43 in row["unexpected"]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["llm_usage"], manifest["llm_usage"]
    assert "garbage" not in json.dumps(manifest["config"])  # the key/answers never leak
    # the LLM accounting is kept in the stage records, and the report shows it per task
    assert cands["llm"] and advs["llm"], (cands.get("llm"), advs.get("llm"))
    report = (run / "report.md").read_text()
    assert "| max_of | seeds | 40 | 4 | 2 | ill_typed 1, wrong_keys 1 |" in report
    assert "| max_of | redteam | 5 | 2 | 2 |" in report
