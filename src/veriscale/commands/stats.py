"""``veriscale stats``: the paper's Table 1 volume figures for one dataset."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from veriscale.report.stats import LABELS, MEASURES, format_number


@click.command("stats")
@click.argument("dataset_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
@click.option("--per-task", "per_task", is_flag=True,
              help="Also each task's volumes (a table; 'per_task' in --json).")
def stats_command(dataset_dir: Path, as_json: bool, per_task: bool) -> None:
    """Volumes of DATASET_DIR: pairs (test.json rows), unexpected outputs and
    unexpected inputs (reject_inputs.json rows), each as total, mean, min, median
    and max over tasks, and with --per-task each task's own. Exit status 2 when
    DATASET_DIR is not a dataset."""
    from veriscale.backends.datasets import NotADataset
    from veriscale.report.stats import dataset_counts, suite_stats

    try:
        counts = dataset_counts(dataset_dir)
        stats = suite_stats(counts)
    except NotADataset as exc:
        Console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(2)
    rows = sorted(counts, key=lambda c: c.task)
    if as_json:
        if per_task:
            stats = {**stats, "per_task": {c.task: {m: getattr(c, m) for m in MEASURES}
                                           for c in rows}}
        click.echo(json.dumps(stats, indent=2))
        return
    if per_task:
        each = Table(title=f"{dataset_dir}: per task")
        each.add_column("task", no_wrap=True)
        for measure in MEASURES:
            each.add_column(LABELS[measure], justify="right")
        for c in rows:
            each.add_row(escape(c.task), *(str(getattr(c, m)) for m in MEASURES))
        Console().print(each)
    table = Table(title=f"{dataset_dir}: {stats['tasks']} tasks")
    table.add_column("")
    for col in ("total", "mean", "min", "median", "max", "tasks with 0"):
        table.add_column(col, justify="right")
    for measure in MEASURES:
        row = stats[measure]
        table.add_row(
            LABELS[measure],
            *(format_number(row[k]) for k in ("total", "mean", "min", "median", "max")),
            str(stats["tasks_with_none"][measure]),
        )
    Console().print(table)
