"""``veriscale mutants``: the built-in flawed candidates as a solutions file.

The mutants ``evaluate --mutants`` scores, written as a model's outputs would be, so
that ``leaderboard`` (or ``evaluate --solutions``) can rank them beside real models:
a weak model whose every sample is wrong. Deterministic for a seed.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from veriscale.commands.oracle import load_suite


@click.command("mutants")
@click.argument("suite", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The solutions file (JSONL) to write.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(["code", "precond", "postcond"]),
              help="Only these kinds of mutant (repeatable; default: all).")
@click.option("--task", "tasks", multiple=True, help="Only these task ids (repeatable).")
@click.option("--seed", default=0, show_default=True, help="Seed of the mutant sampler.")
@click.option("--max-mutants", default=20, show_default=True,
              help="At most this many mutants of each kind per task.")
def mutants_command(suite: Path, out: Path, kinds: tuple[str, ...], tasks: tuple[str, ...],
                    seed: int, max_mutants: int) -> None:
    """Write SUITE's built-in code and spec mutants as a solutions file (one line each,
    with a ``mutant`` field naming its operator), a weak model for the leaderboard."""
    from veriscale.atomic import write_text_atomic
    from veriscale.evaluation.mutants import solution_lines, task_mutants

    console = Console(stderr=True)
    loaded, _ = load_suite(suite, tasks, console, False)
    if not loaded:
        raise click.ClickException(f"{suite}: no loadable tasks")
    chosen = set(kinds) or {"code", "precond", "postcond"}
    mutants = [m for t in loaded for m in task_mutants(t, max_mutants, seed) if m.kind in chosen]
    lines = solution_lines(mutants)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    per_kind = {k: sum(m.kind == k for m in mutants) for k in sorted(chosen)}
    console.print(f"{out}: {len(lines)} mutants of {len(loaded)} tasks "
                  + ", ".join(f"{k} {n}" for k, n in per_kind.items()))
