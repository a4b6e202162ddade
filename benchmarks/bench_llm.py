"""The LLM path on the bundled benchmark against a local OpenAI-compatible server.

Prints requests, tokens and dollars of a first run, an identical rerun (should be
0 requests), and a rerun after an [llm] transport change (0 requests, 0 stages
recomputed); then the wall time of the expansion with a server that takes
``--delay`` seconds per answer, serial (concurrency 1) vs concurrent across tasks.

The server answers the way current models do: a ``<think>`` block before the
answer, seeds as "likely valid" and "likely invalid" arrays in a fence, a spec
with an extra usage-example fence, red-team answers with a shared helper, and a
usage block sized by the text. Answers are built from the task the prompt is
about (its offline flawed specs and adversaries), so they compile and run.

    PYTHONPATH=src python3 benchmarks/bench_llm.py [--delay 2] [--timing-tasks 8]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "llm"))
from llm_fake_server import FakeOpenAI, Reply, system_prompt, user_prompt  # noqa: E402

from veriscale.backends.datasets import load_benchmark  # noqa: E402
from veriscale.backends.python.format import python_sections  # noqa: E402
from veriscale.benchmark.model import Task  # noqa: E402
from veriscale.llm.offline import flawed_specs, offline_adversaries  # noqa: E402
from veriscale.pipeline.config import RunConfig  # noqa: E402
from veriscale.pipeline.run import EXPANSION_STAGES, run_pipeline  # noqa: E402

BUNDLED = ROOT / "src" / "veriscale" / "examples" / "bundled"
PRICES = {"bench-model": {"input": 3.0, "output": 15.0}}  # $ per million tokens


def _mutate(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + value[:1]
    if isinstance(value, list):
        return [*value, value[0]] if value else value
    return value


def _shrink(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return -value - 1
    if isinstance(value, (str, list)):
        return value[:0]
    return value


def seed_answer(user: str) -> str:
    m = re.search(r"Examples of likely-valid inputs: (\[.*\])\n", user)
    examples = json.loads(m.group(1)) if m else []
    valid = [{"input": {k: _mutate(v) for k, v in e["input"].items()}} for e in examples]
    invalid = [{"input": {k: _shrink(v) for k, v in e["input"].items()}} for e in examples[:2]]
    draft = json.dumps(valid[:1])
    return (f"<think>The boundary is the precondition. A first draft: {draft}. I should add "
            f"invalid ones too.</think>\nLikely valid:\n```json\n{json.dumps(valid, indent=1)}\n"
            f"```\nLikely invalid:\n```json\n{json.dumps(invalid, indent=1)}\n```")


def spec_answer(task: Task) -> str:
    flawed = flawed_specs(task)
    post = flawed[0].postcond if flawed else python_sections(task).postcondition  # type: ignore[union-attr]
    return (f"<think>Translate only the explicit constraints.</think>\n```python\n{post.strip()}\n"
            f"```\nUsage example:\n```python\nprint(postcondition(...))\n```")


def redteam_answer(task: Task) -> str:
    fn = task.signature.name
    impls = offline_adversaries(task).implementations[:3]
    parts = ["<think>Exploit what the postcondition forgets.</think>", "```python",
             "def _unused_helper(x):\n    return x"]
    for i, impl in enumerate(impls, start=1):
        code = re.sub(rf"\bdef {re.escape(fn)}\(", f"def {fn}{i}(", impl.code.strip())
        parts += [f"# Adversarial Implementation {i}", code]
    parts.append("```")
    return "\n".join(parts)


class Answers:
    """The realistic server: finds the task a prompt is about and answers for it."""

    def __init__(self, tasks: list[Task]) -> None:
        self.tasks = tasks

    def task_of(self, user: str) -> Task | None:
        return next((t for t in self.tasks if t.description.strip()[:200] in user), None)

    def __call__(self, body: dict[str, Any], n: int) -> Reply:
        system, user = system_prompt(body), user_prompt(body)
        task = self.task_of(user)
        if task is None:
            return Reply(500, "no task in the prompt")
        if "propose test inputs" in system:
            text = seed_answer(user)
        elif "into a precise mathematical model" in system:
            params = ", ".join(f"{p.name} : {p.type_text}" for p in task.signature.params)
            text = (f"<think>Input: maybe? Output: maybe?</think>\nInput:\na. {params}\n"
                    f"b. as described (E)\nOutput:\na. res1 : {task.signature.return_text}")
        elif "precondition and the postcondition" in system:
            text = spec_answer(task)
        elif "red teamer" in system:
            text = redteam_answer(task)
        else:
            return Reply(500, "unknown role")
        prompt_chars = sum(len(m.get("content") or "") for m in body["messages"])
        usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(text) // 4}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return Reply(content=text, usage=usage)


def config(url: str, tasks: list[str], **llm: Any) -> RunConfig:
    return RunConfig.model_validate({
        "seed": 7,
        "backend": "python",
        "tasks": tasks,
        "llm": {"provider": "openai", "base_url": url, "roles": {"seeds": "bench-model"},
                "prices": PRICES, "backoff_initial": 0.05, **llm},
        "report": {"time_evaluation": "off"},
    })


def one_run(bench: Path, out: Path, cfg: RunConfig, server: FakeOpenAI,
            reduce: bool = True) -> dict[str, Any]:
    before = len(server.requests)
    start = time.perf_counter()
    run_pipeline(bench, out, cfg, reduce=reduce, report=reduce, console=Console(quiet=True))
    wall = time.perf_counter() - start
    manifest = json.loads((out / "manifest.json").read_text())
    usage = manifest.get("llm_usage", {}).get("this_run", {})
    n = len(manifest["tasks"])
    recomputed = sum(n - manifest["resumed_tasks"].get(s, 0) for s in EXPANSION_STAGES)
    return {"requests": len(server.requests) - before, "paid": usage.get("requests", 0),
            "cache_hits": usage.get("cache_hits", 0),
            "tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
            "cost_usd": usage.get("cost_usd", 0.0), "stages_recomputed": recomputed,
            "wall_s": wall, "errors": len(manifest.get("errors", {})),
            "max_inflight": server.max_inflight}


def row(name: str, r: dict[str, Any]) -> str:
    return (f"{name:<34} {r['requests']:>8} {r['cache_hits']:>6} {r['tokens']:>8} "
            f"{r['cost_usd']:>9.4f} {r['stages_recomputed']:>10} {r['wall_s']:>8.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--delay", type=float, default=2.0, help="seconds per answer (timing part)")
    ap.add_argument("--timing-tasks", type=int, default=8, help="tasks in the timing part")
    ap.add_argument("--concurrency", type=int, default=8)
    args = ap.parse_args()
    tasks, _ = load_benchmark(BUNDLED)
    ids = [t.id for t in tasks]
    answers = Answers(tasks)
    work = Path(tempfile.mkdtemp(prefix="bench_llm_"))
    print(f"bundled benchmark: {len(ids)} tasks, Python backend; run dirs under {work}")
    print(f"{'run':<34} {'requests':>8} {'cached':>6} {'tokens':>8} {'dollars':>9} "
          f"{'recomputed':>10} {'wall s':>8}")
    with FakeOpenAI(answers) as srv:
        first = one_run(BUNDLED, work / "run", config(srv.base_url, ids), srv)
        print(row("first run", first))
        again = one_run(BUNDLED, work / "run", config(srv.base_url, ids), srv)
        print(row("identical rerun", again))
    with FakeOpenAI(answers) as other:  # a new base_url, and timeout/concurrency/prices changed
        moved = one_run(BUNDLED, work / "run", config(
            other.base_url, ids, timeout=33, concurrency=16,
            prices={"bench-model": {"input": 1.0, "output": 1.0}}), other)
        print(row("rerun, [llm] transport changed", moved))
    manifest = json.loads((work / "run" / "manifest.json").read_text())
    total = manifest["llm_usage"]["total"]
    print(f"cumulative over the three runs: {total['requests']} paid requests, "
          f"{total['cache_hits']} cache hits, ${total['cost_usd']:.4f}; errors: {first['errors']}")

    sub = ids[: args.timing_tasks]
    print(f"\nwall time of expand (no reduce) on {len(sub)} tasks, {args.delay:g} s per answer:")
    timings = {}
    for name, conc in (("serial (concurrency 1)", 1),
                       (f"concurrent (concurrency {args.concurrency})", args.concurrency)):
        with FakeOpenAI(answers, delay=args.delay) as slow:
            r = one_run(BUNDLED, work / f"timing-{conc}", config(slow.base_url, sub,
                                                                   concurrency=conc), slow,
                        reduce=False)
        timings[conc] = r["wall_s"]
        print(f"  {name:<28} {r['requests']:>4} requests  {r['wall_s']:>7.1f} s  "
              f"max in flight {r['max_inflight']}")
    if timings.get(1) and timings.get(args.concurrency):
        print(f"  speed-up: x{timings[1] / timings[args.concurrency]:.1f}")


if __name__ == "__main__":
    main()
