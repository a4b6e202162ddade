"""``veriscale evaluate``: score model outputs, or built-in mutants, on suites.

``veriscale evaluate SUITE --solutions FILE`` prints per-metric pass@k with
lower/upper bounds, per-task verdicts and wall time; ``--mutants SUITE...``
measures each suite's discriminative power on flawed candidates derived from the
first suite's ground truth (plus the ground truth itself as a control).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from veriscale.backends.registry import backend_names
from veriscale.commands.execution_options import config_option, executor_options
from veriscale.commands.oracle import (
    backend_options,
    load_suite,
    open_oracle,
    percent,
    with_isolation,
)
from veriscale.commands.sandbox_option import configure_sandbox, sandbox_option
from veriscale.commands.status import Status, hook_backend

SHOWN_TASK_METRICS = {"code": "code", "precond_sound_complete": "pre s&c",
                      "postcond_sound_complete": "post s&c", "precond_postcond": "pre+post",
                      "code_spec": "code+spec"}


def _parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError as exc:
        raise click.BadParameter(f"--k must be comma-separated integers, got {text!r}") from exc
    if not ks or ks[0] < 1:
        raise click.BadParameter("--k values must be >= 1")
    return ks


@click.command("evaluate")
@click.argument("suites", nargs=-1, required=True,
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--solutions", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="JSONL of model outputs (task_id, sample, code / precond / postcond).")
@click.option("--mutants", is_flag=True,
              help="Score built-in flawed candidates and the ground truth on each suite.")
@click.option("--backend", "backend_name", type=click.Choice(backend_names()), default=None,
              help="Oracle backend (default: python for Python tasks, lean otherwise).")
@click.option("--runner", default=None, help="Lean runner (native, wasm).")
@click.option("--timeout", type=float, default=None,
              help="Per-check time limit in seconds, passed to the backend (its default if unset).")
@click.option("--backend-option", "-o", "backend_opts", multiple=True,
              help="Extra backend constructor option KEY=VALUE (JSON value), repeatable.")
@click.option("--k", "ks_text", default="1", show_default=True,
              help="pass@k values, comma-separated (each needs that many samples per task).")
@click.option("--task", "tasks", multiple=True, help="Only these task ids (repeatable).")
@click.option("--seed", default=0, show_default=True, help="Seed of the mutant sampler.")
@click.option("--max-mutants", default=20, show_default=True,
              help="At most this many mutants per task and kind (code, precond, postcond).")
@click.option("--mutant-timeouts", default=None, type=click.IntRange(min=0),
              help="With --mutants: after this many timed-out tests a mutant's remaining "
              "tests count as UNKNOWN, not run (0: run them all; default 2).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option("--counterexamples", "counterexamples_path", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="With --solutions: write every test that failed a candidate, one JSON "
              "object per line (schema veriscale.counterexample/1), smallest input first.")
@executor_options
@config_option
@sandbox_option
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Ask the oracle again instead of reusing the oracle cache "
              "($VERISCALE_ORACLE_CACHE or ~/.cache/veriscale/oracle.sqlite).")
def evaluate_command(suites: tuple[Path, ...], solutions: Path | None, mutants: bool,
                     backend_name: str | None, runner: str | None, timeout: float | None,
                     backend_opts: tuple[str, ...], ks_text: str, tasks: tuple[str, ...],
                     seed: int, max_mutants: int, mutant_timeouts: int | None, as_json: bool,
                     counterexamples_path: Path | None, executor: str | None, ray_address: str | None, config_path: Path | None,
                     sandbox: str | None, no_cache: bool) -> None:
    """Score SOLUTIONS on SUITE (VERINA semantics, pass@k with lower/upper bounds), or with
    --mutants the discriminative power of each SUITE."""
    console = Console(stderr=as_json)
    if mutants == (solutions is not None):
        raise click.UsageError("give exactly one of --solutions FILE or --mutants")
    if not mutants and len(suites) != 1:
        raise click.UsageError("--solutions scores one suite at a time")
    if counterexamples_path is not None and solutions is None:
        raise click.UsageError("--counterexamples needs --solutions")
    ks = _parse_ks(ks_text)
    configure_sandbox(sandbox, untrusted=solutions is not None)  # model outputs
    loaded, load_issues = [], []
    for s in suites:
        ts, issues = load_suite(s, tasks, console, as_json)
        loaded.append((str(s), ts))
        load_issues.extend(issues)
    for name, ts in loaded:
        if not ts:
            raise click.ClickException(f"{name}: no loadable tasks")
    first_tasks = loaded[0][1]
    from veriscale.backends.language import plugin_for

    name = backend_name or plugin_for(first_tasks[0]).backend
    options = backend_options(runner, backend_opts, timeout)
    with open_oracle(name, options, executor=executor, ray_address=ray_address,
                     config_path=config_path, no_cache=no_cache) as oracle:
        if mutants:
            _run_mutants(oracle.backend, loaded, seed, max_mutants, console, as_json,
                         oracle.cache, mutant_timeouts)
        else:
            assert solutions is not None
            _run_solutions(oracle.backend, loaded[0], solutions, ks, console, as_json,
                           oracle.cache, load_issues, counterexamples_path)


def _emit_json(data: dict[str, Any], cache: Any) -> None:
    from veriscale.backends.cache import cache_summary

    json.dump({**data, "oracle_cache": cache_summary(cache)}, sys.stdout, indent=1)
    sys.stdout.write("\n")


def _run_solutions(backend: Any, suite: tuple[str, list[Any]], solutions: Path,
                   ks: tuple[int, ...], console: Console, as_json: bool, cache: Any,
                   load_issues: list[str] | None = None,
                   counterexamples_path: Path | None = None) -> None:
    from veriscale.evaluation.harness import BOUNDS, evaluate
    from veriscale.evaluation.solutions import load_solutions

    name, tasks = suite
    cands, issues = load_solutions(solutions, tasks)
    if not as_json:
        for issue in issues:
            console.print(f"[yellow]{escape(f'{solutions}: {issue}')}[/]")
    done = [0]

    def advance(n: int) -> None:
        done[0] += n
        status.update(f"evaluating {name}: {done[0]}/{len(tasks)} tasks scored")

    with Status(console, f"evaluating {name}") as status:
        unhook = hook_backend(backend, status, f"evaluating {name}")
        try:
            report = evaluate(backend, tasks, cands, suite=name, ks=ks, progress=advance)
        finally:
            unhook()
    task_issues = list(report.issues)  # tasks whose rows cannot be read: never PASS
    report.issues = list(load_issues or []) + [str(i) for i in issues] + task_issues
    if counterexamples_path is not None:
        from veriscale.atomic import write_text_atomic

        lines = [json.dumps(line, sort_keys=True, default=str) for t in report.tasks
                 for smp in t.samples for line in smp.counterexample_lines(name)]
        write_text_atomic(counterexamples_path, "".join(f"{x}\n" for x in lines))
        if not as_json:
            console.print(escape(f"{len(lines)} counterexamples -> {counterexamples_path}"))
    if as_json:
        _emit_json(with_isolation(report.to_json()), cache)
        return
    scores = Table(title=f"{name}: scores (%, mean over {len(tasks)} tasks)")
    scores.add_column("metric", no_wrap=True)
    for k in report.ks:
        for b in BOUNDS:
            scores.add_column(f"pass@{k} {b}", justify="right")
    for m in report.metrics:
        scores.add_row(m, *[percent(report.score(m, b, k)) for k in report.ks for b in BOUNDS])
    console.print(scores)
    shown = [m for m in SHOWN_TASK_METRICS if m in report.metrics]
    per_task = Table(title="per task (lower/upper; c/n over several samples)")
    per_task.add_column("task", no_wrap=True)
    for m in shown:
        per_task.add_column(SHOWN_TASK_METRICS[m])
    for tr in report.tasks:
        cells = []
        for m in shown:
            lo, up = tr.verdict(m, "lower"), tr.verdict(m, "upper")
            cells.append(lo if lo == up else f"{lo}/{up}")
        per_task.add_row(tr.task_id, *cells)
    console.print(per_task)
    for issue in task_issues:
        console.print(f"[yellow]{escape(str(issue))}[/]")
    notes = sorted({n.split("Plausible stage not run: ", 1)[-1] for t in report.tasks
                    for smp in t.samples for n in smp.notes.values()})
    for note in notes:
        console.print(f"[yellow]note: some spec tests stayed unknown without VERINA's "
                      f"Plausible stage: {note} (per metric in --json notes)[/]")
    for t in report.tasks:  # an upper bound that rests on UNKNOWN says little
        for smp in t.samples:
            mostly = smp.mostly_unknown()
            if mostly:
                causes = ", ".join(f"{c} {n}" for part in smp.unknown_causes.values()
                                   for c, n in sorted(part.items(), key=lambda kv: -kv[1]))
                console.print(
                    escape(f"warning: {t.task_id} sample {smp.sample}: more than half of the "
                           f"tests UNKNOWN on {', '.join(mostly)}" + (f" ({causes})"
                                                                      if causes else "")),
                    style="yellow")
    console.print(f"wall time {report.wall_seconds:.2f} s (code {report.code_seconds:.2f} s, "
                  f"spec {report.spec_seconds:.2f} s), backend {report.backend}")


def _run_mutants(backend: Any, loaded: list[tuple[str, list[Any]]], seed: int,
                 max_mutants: int, console: Console, as_json: bool, cache: Any,
                 mutant_timeouts: int | None = None) -> None:
    from veriscale.evaluation.power import DEFAULT_MUTANT_TIMEOUTS, discriminative_power

    limit = DEFAULT_MUTANT_TIMEOUTS if mutant_timeouts is None else mutant_timeouts
    try:
        with Status(console, "scoring mutants") as status:
            report = discriminative_power(backend, loaded, max_per_kind=max_mutants, seed=seed,
                                          progress=lambda s: status.update(f"scored {s}"),
                                          max_timeouts=limit)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        _emit_json(with_isolation(report.to_json()), cache)
        return
    kinds = ["code", "precond", "postcond", "all"]
    table = Table(title=f"discriminative power: share of flawed candidates definitely detected "
                        f"({report.generated - len(report.discarded)} mutants, "
                        f"{len(report.discarded)} discarded as not compiling)")
    table.add_column("suite", overflow="fold")
    for k in kinds:
        table.add_column(f"{k}", justify="right")
    table.add_column("GT problems", justify="right")
    table.add_column("cut", justify="right")
    table.add_column("time (s)", justify="right")
    for sp in report.suites:
        rates = sp.rates()
        cells = []
        for k in kinds:
            r = rates.get(k)
            if not r or not r["mutants"]:
                cells.append("-")
                continue
            # the headline is definite: a test that fails the mutant even when every
            # UNKNOWN counts as passing (an undecided row decides nothing)
            cell = (f"{100 * r['rate_definite']:.1f}% ({r['detected_definitely']}/"
                    f"{r['mutants']})")
            if r["detected_definitely"] != r["detected"]:
                cell += f" [{100 * r['rate']:.1f}% with UNKNOWN]"
            cells.append(cell)
        table.add_row(sp.suite, *cells, str(len(sp.gt_problems)), str(sp.cut_by_timeouts),
                      f"{sp.seconds:.2f} (code {sp.code_seconds:.2f}, spec {sp.spec_seconds:.2f})")
    console.print(table)
    for sp in report.suites:
        for p in sp.gt_problems:
            console.print(f"[red]{escape(f'{sp.suite}: suite problem: {p}')}[/]")
    if any(sp.cut_by_timeouts for sp in report.suites):
        console.print(f"note: 'cut' mutants timed out on {limit} tests; their other tests "
                      "count as UNKNOWN (detected, but not definitely), so definite shares "
                      "are lower bounds (--mutant-timeouts 0 runs every test).")
    console.print("note: equivalent mutants (indistinguishable from the ground truth) count as "
                  "not detected, so these shares are lower bounds.")
