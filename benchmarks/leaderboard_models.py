"""Solutions files of known quality for a leaderboard demonstration, from a suite's own tasks.

    python3 benchmarks/leaderboard_models.py SUITE_DIR --out DIR [--seed S]

writes, in DIR, one solutions file (JSONL, as ``evaluate`` reads) per "model":

- ``ground-truth.jsonl``: each task's own code and specification (the control: every
  score 100 % on a suite the ground truth agrees with);
- ``weakened.jsonl``: the ground-truth code, and a postcondition weakened as the red team
  weakens it (a dropped conjunct, a loosened comparison): a plausible SpecGen model
  whose code is right and whose postconditions are often unsound;
- ``half-right.jsonl``: for a seeded half of the tasks the ground truth, for the other
  half one built-in mutant of each kind (a model right about half the time);
- ``mutants.jsonl``: every built-in mutant (``veriscale mutants``), the weak model.

Each line keeps a ``model_note`` of what it is. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.language import plugin_for
from veriscale.evaluation.mutants import solution_lines, task_mutants


def ground_truth_line(task: Any, sample: int = 0) -> dict[str, Any]:
    code, (pre, post, pre_aux, post_aux) = plugin_for(task).ground_truth(task)
    return {"task_id": task.id, "sample": sample, "definition": code, "precond": pre,
            "postcond": post, "precond_aux": pre_aux, "postcond_aux": post_aux,
            "model_note": "ground truth"}


def weakened_line(task: Any) -> dict[str, Any]:
    line = ground_truth_line(task)
    weak = plugin_for(task).weakened_postconditions(task)
    if weak:
        line.update(postcond=weak[0].body, model_note=f"postcondition {weak[0].label}")
    return line


def half_right_lines(task: Any, rng: random.Random) -> list[dict[str, Any]]:
    if rng.random() < 0.5:
        return [ground_truth_line(task)]
    mutants = task_mutants(task, 3, seed=rng.randrange(1 << 30))
    chosen: dict[str, dict[str, Any]] = {}
    for m, mutant_line in zip(mutants, solution_lines(mutants), strict=True):
        chosen.setdefault(m.kind, mutant_line)
    code = chosen.get("code")
    post = chosen.get("postcond")
    line = ground_truth_line(task)
    if code is not None:
        line["definition"] = code["definition"]
    if post is not None:
        line.update(postcond=post["postcond"], postcond_aux=post["postcond_aux"])
    line["model_note"] = "mutated: " + ", ".join(
        m["mutant"] for m in (code, post) if m is not None)
    return [line]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("suite", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-mutants", type=int, default=3)
    args = ap.parse_args()
    tasks, issues = load_benchmark(args.suite)
    if issues:
        print(f"{args.suite}: {len(issues)} load issue(s); those tasks are left out")
    rng = random.Random(args.seed)
    models = {
        "ground-truth": [ground_truth_line(t) for t in tasks],
        "weakened": [weakened_line(t) for t in tasks],
        "half-right": [line for t in tasks for line in half_right_lines(t, rng)],
        "mutants": solution_lines([m for t in tasks
                                   for m in task_mutants(t, args.max_mutants, args.seed)]),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    for name, lines in models.items():
        path = args.out / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                        encoding="utf-8")
        print(f"{path}: {len(lines)} lines")


if __name__ == "__main__":
    main()
