"""``veriscale report RUN_DIR``: write report.md and plots, print a summary."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

SUITES = ("original", "plus", "lite")
METRICS = ("pairs", "unexpected_outputs", "unexpected_inputs")
TITLES = {"pairs": "Pairs", "unexpected_outputs": "Unexp. outputs",
          "unexpected_inputs": "Unexp. inputs"}


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--no-plots", is_flag=True, help="Write report.md only, without PNG plots.")
def report_command(run_dir: Path, no_plots: bool) -> None:
    """Write RUN_DIR/report.md (Table 1, per-task kills, timings, usage) and PNG plots."""
    from veriscale.report.build import build_report
    from veriscale.report.report import volume_text

    path, report = build_report(run_dir, plots=not no_plots)
    console = Console(stderr=True)
    table = Table(title="Table 1: mean (min–max) per task", title_justify="left")
    table.add_column("Dataset")
    for m in METRICS:
        table.add_column(TITLES[m], justify="right")
    for name in SUITES:
        row = report.table1.get(name)
        if row is None:
            table.add_row(name.capitalize(), *["n/a"] * len(METRICS))
            continue
        mult = report.multipliers(name)
        cells = [volume_text(row[m], mult.get(m), bool(mult)) for m in METRICS]
        table.add_row(f"{name.capitalize()} ({row['tasks']})", *cells)
    console.print(table)
    covered = [f.lite_kill_coverage for f in report.tasks if f.lite_kill_coverage is not None]
    if covered:
        console.print(f"Lite kill coverage: mean {100 * sum(covered) / len(covered):.1f}% "
                      f"over {len(covered)} tasks with kills")
    timings = report.manifest.get("timings") or {}
    if isinstance(timings, dict) and "total" in timings:
        console.print(f"Total wall time: {float(timings['total']):.1f}s")
    click.echo(str(path))
