"""``veriscale stats``: the paper's Table 1 volume figures for one dataset."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from veriscale.report.stats import LABELS, MEASURES, format_number


@click.command("stats")
@click.argument("dataset_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def stats_command(dataset_dir: Path, as_json: bool) -> None:
    """Per-task volumes of DATASET_DIR: pairs (test.json rows), unexpected outputs
    and unexpected inputs (reject_inputs.json rows), each as total, mean, min,
    median and max over tasks. Exit status 2 when DATASET_DIR is not a dataset."""
    from veriscale.benchmark.loader import NotADataset
    from veriscale.report.stats import dataset_counts, suite_stats

    try:
        stats = suite_stats(dataset_counts(dataset_dir))
    except NotADataset as exc:
        Console(stderr=True).print(f"[red]error:[/] {exc}")
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(stats, indent=2))
        return
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
