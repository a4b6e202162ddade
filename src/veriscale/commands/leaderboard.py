"""``veriscale leaderboard``: several models on several suites, side by side."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import click
from rich import box
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


def _model(text: str) -> tuple[str, Path]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise click.BadParameter(f"--solutions must be NAME=FILE, got {text!r}")
    if not Path(path).is_file():
        raise click.BadParameter(f"--solutions {name}: no file {path}")
    return name, Path(path)


def _names(suites: tuple[Path, ...]) -> list[str]:
    """Each suite by its folder name, or by its path where two folders share a name."""
    short = [s.name for s in suites]
    return [s.name if short.count(s.name) == 1 else str(s) for s in suites]


@click.command("leaderboard")
@click.argument("suites", nargs=-1, required=True,
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--solutions", "models", multiple=True, required=True, metavar="NAME=FILE",
              help="A model's outputs (JSONL as for evaluate), repeatable.")
@click.option("--backend", "backend_name", type=click.Choice(backend_names()), default=None,
              help="Oracle backend (default: from the first suite's language).")
@click.option("--runner", default=None, help="Lean runner (native, wasm).")
@click.option("--timeout", type=float, default=None, help="Per-check time limit in seconds.")
@click.option("--backend-option", "-o", "backend_opts", multiple=True,
              help="Extra backend constructor option KEY=VALUE (JSON value), repeatable.")
@click.option("--task", "tasks", multiple=True, help="Only these task ids (repeatable).")
@click.option("--bootstrap", "rounds", default=1000, show_default=True,
              type=click.IntRange(min=100), help="Bootstrap rounds of each drop's interval.")
@click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write one row per suite, model and metric here.")
@click.option("--png", "png_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the Figure-5-style bar chart here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write one self-contained page (table, chart, and the "
              "tests that failed each candidate) here.")
@executor_options
@config_option
@sandbox_option
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Ask the oracle again instead of reusing the oracle cache.")
def leaderboard_command(suites: tuple[Path, ...], models: tuple[str, ...],
                        backend_name: str | None, runner: str | None, timeout: float | None,
                        backend_opts: tuple[str, ...], tasks: tuple[str, ...], rounds: int,
                        seed: int, as_json: bool, csv_path: Path | None, png_path: Path | None,
                        html_path: Path | None, executor: str | None, ray_address: str | None,
                        config_path: Path | None, sandbox: str | None, no_cache: bool) -> None:
    """Score every model (--solutions NAME=FILE) on every SUITE: code and spec scores
    with both bounds and their gap, each model's drop from the first SUITE with a
    bootstrap interval over tasks, the models' rank on each suite and Kendall's tau
    between suites' rankings."""
    from veriscale.backends.language import plugin_for
    from veriscale.evaluation.harness import evaluate
    from veriscale.evaluation.leaderboard import Leaderboard
    from veriscale.evaluation.solutions import load_solutions

    console = Console(stderr=as_json)
    chosen = [_model(m) for m in models]
    if len({n for n, _ in chosen}) != len(chosen):
        raise click.BadParameter("two --solutions share a name")
    configure_sandbox(sandbox, untrusted=True)  # model outputs
    names = _names(suites)
    loaded = []
    for s in suites:
        ts, _ = load_suite(s, tasks, console, as_json)
        if not ts:
            raise click.ClickException(f"{s}: no loadable tasks")
        loaded.append(ts)
    name = backend_name or plugin_for(loaded[0][0]).backend
    options = backend_options(runner, backend_opts, timeout)
    reports: dict[str, dict[str, Any]] = {}
    with open_oracle(name, options, executor=executor, ray_address=ray_address,
                     config_path=config_path, no_cache=no_cache) as oracle, \
            Status(console, "leaderboard") as status:
        unhook = hook_backend(oracle.backend, status, "leaderboard")
        try:
            for suite, ts in zip(names, loaded, strict=True):
                for model, path in chosen:
                    status.update(f"leaderboard: {model} on {suite}")
                    cands, issues = load_solutions(path, ts)
                    for issue in issues if not as_json else []:
                        console.print(f"[yellow]{escape(f'{model}: {path}: {issue}')}[/]")
                    reports.setdefault(suite, {})[model] = evaluate(oracle.backend, ts, cands,
                                                                    suite=suite)
        finally:
            unhook()
    board = Leaderboard(names, [n for n, _ in chosen], reports, rounds=rounds, seed=seed)
    if csv_path is not None:
        rows = board.rows()
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        with csv_path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    png = None
    if png_path is not None or html_path is not None:
        from veriscale.report.leaderboard import plot_leaderboard

        png = plot_leaderboard(board, png_path or Path(str(html_path) + ".png"))
    if html_path is not None:
        from veriscale.atomic import write_text_atomic
        from veriscale.report.leaderboard import render_html

        html_path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(html_path, render_html(board, png))
        if png_path is None and png is not None:
            png.unlink(missing_ok=True)  # the page holds it
    if as_json:
        json.dump(with_isolation(board.to_json()), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    _print(board, console)


def _print(board: Any, console: Console) -> None:
    """One row per suite, model and metric: eight columns, readable on an 80-column
    terminal (a column per metric and figure squeezed every cell to nothing there)."""
    from veriscale.evaluation.leaderboard import TITLES_SHORT

    table = Table(title=f"leaderboard: pass@1 % (drop from {board.suites[0]}, "
                        f"95 % bootstrap CI over tasks)", box=box.SIMPLE_HEAD,
                  collapse_padding=True, pad_edge=False)
    for col in ("suite", "model", "metric"):
        table.add_column(col, no_wrap=True)
    for col in ("lower", "upper", "gap", "rank", "drop [CI]"):
        table.add_column(col, justify="right", no_wrap=True)
    for suite in board.suites:
        ranking = {m: board.ranking(suite, m) for m in board.metrics}
        for model in board.models:
            for metric in board.metrics:
                d = board.drop(suite, model, metric)
                table.add_row(escape(suite), escape(model),
                              escape(TITLES_SHORT.get(metric, metric)),
                              percent(board.score(suite, model, metric)),
                              percent(board.score(suite, model, metric, "upper")),
                              percent(board.gap(suite, model, metric)),
                              f"{ranking[metric][model]:g}",
                              "" if d is None else
                              f"{percent(d[0])} [{percent(d[1])}, {percent(d[2])}]")
        table.add_section()
    console.print(table)
    for metric in board.metrics:
        for i, a in enumerate(board.suites):
            for b in board.suites[i + 1:]:
                tau = board.tau(a, b, metric)
                console.print(escape(f"Kendall's tau, {metric}, {a} vs {b}: "
                                     + ("n/a" if tau is None else f"{tau:.3f}")))
