"""``veriscale reduce``: a Plus suite → a Lite suite."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table


@click.command("reduce")
@click.argument("plus_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Where to write the Lite suite.")
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Run directory holding the kill matrix (tasks/<id>/unexpected.json). "
              "Default: PLUS_DIR's parent when it is a run directory.")
@click.option("--max-pairs", type=int, default=None,
              help="Pair budget per task (default: the run's, else 50).")
@click.option("--max-reject-inputs", type=int, default=None,
              help="Reject-input budget per task (default: the run's, else 50).")
@click.option("--keep-original/--no-keep-original", default=None,
              help="Keep every original row before spending the pair budget "
              "(default: the run's, else on).")
@click.option("--json", "as_json", is_flag=True, help="Print the per-task sizes as JSON.")
def reduce_command(plus_dir, out, run_dir, max_pairs, max_reject_inputs, keep_original, as_json):
    """Reduce PLUS_DIR (any VERINA-format or Python-format suite) to a Lite suite.

    Reject inputs are reduced by boundary-preserving reduction, which needs
    nothing but the inputs. Expected pairs are reduced by adversary-killing set
    cover, which needs the kill matrix of a VeriScale run; without one, every
    pair is kept (and the output says so).
    """
    import json

    from veriscale.backends.datasets import NotADataset, load_benchmark
    from veriscale.pipeline.reduce import reduce_suite, run_reduction_settings

    console = Console(stderr=True)
    try:
        tasks, issues = load_benchmark(plus_dir)
    except NotADataset as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(2)
    for issue in issues:
        console.print(f"[yellow]load:[/] {escape(str(issue))}")
    if run_dir is None and (plus_dir.resolve().parent / "tasks").is_dir():
        run_dir = plus_dir.resolve().parent
    settings = run_reduction_settings(run_dir)
    overrides = {"max_pairs": max_pairs, "max_reject_inputs": max_reject_inputs,
                 "keep_original": keep_original}
    settings = settings.model_copy(update={k: v for k, v in overrides.items() if v is not None})
    try:
        summary = reduce_suite(tasks, out, run_dir=run_dir, settings=settings)
    except (OSError, ValueError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(1)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    table = Table(title=f"Lite suite written to {out}")
    for col in ("task", "pairs", "lite pairs", "reject inputs", "lite reject inputs", "kill matrix"):
        table.add_column(col, justify="right" if col != "task" else "left")
    for tid, row in summary["per_task"].items():
        table.add_row(tid, str(row["pairs"]), str(row["lite_pairs"]), str(row["reject_inputs"]),
                      str(row["lite_reject_inputs"]), "yes" if row["kill_matrix"] else "no")
    Console().print(table)
