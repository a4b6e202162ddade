"""``veriscale validate``: statically lint a dataset in the VERINA directory format."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from veriscale.benchmark.validate import DEFECT_KINDS, ValidationReport

SHORT = {
    "ill_typed": "typed",
    "unparsable": "parse",
    "duplicate_input": "dup",
    "input_in_both": "both",
    "expected_in_unexpected": "exp∈unexp",
    "render_hazard": "hazard",
}


@click.command("validate")
@click.argument("dataset_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.option("--details", is_flag=True,
              help="List every defect (text) or add a 'details' list (JSON).")
def validate_command(dataset_dir: Path, as_json: bool, details: bool) -> None:
    """Lint DATASET_DIR without running anything: values that do not parse or do
    not fit their type, duplicate inputs, inputs both expected and rejected,
    expected outputs listed as unexpected, and values VERINA's unescaped
    renderer would break. Exit status 1 on any defect or unloadable task, 2 when
    DATASET_DIR is not a dataset, 0 otherwise."""
    from veriscale.backends.datasets import NotADataset, validate_dataset

    try:
        report = validate_dataset(dataset_dir)
    except NotADataset as exc:
        Console(stderr=True).print(f"[red]error:[/] {exc}")
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(report.to_json(details=details), indent=2, ensure_ascii=False))
    else:
        print_report(report, Console(), details=details)
    sys.exit(0 if report.ok else 1)


def print_report(report: ValidationReport, console: Console, *, details: bool = False) -> None:
    """The per-task table (tasks with defects only), totals, errors and examples."""
    table = Table(title=f"validate: {len(report.tasks)} tasks", show_footer=True,
                  caption="typed=ill_typed parse=unparsable dup=duplicate_input "
                  "both=input_in_both exp∈unexp=expected_in_unexpected hazard=render_hazard")
    totals = report.totals()
    width = max([len(t.task) for t in report.tasks if t.defects] + [5])
    table.add_column("task", footer="total", no_wrap=True, min_width=width)
    for kind in DEFECT_KINDS:
        table.add_column(SHORT[kind], justify="right", footer=str(totals[kind]))
    table.add_column("all", justify="right", footer=str(report.defect_count))
    for task, counts in report.per_task().items():
        cells = [str(counts.get(kind, 0)) if counts.get(kind) else "" for kind in DEFECT_KINDS]
        table.add_row(task, *cells, str(sum(counts.values())))
    console.print(table)
    for issue in report.errors:
        console.print(f"[red]error:[/] {escape(str(issue))}")
    for issue in report.warnings:
        console.print(f"[yellow]warning:[/] {escape(str(issue))}")
    shown: dict[str, int] = {}
    for task in report.tasks:
        for d in task.defects:
            shown[d.kind] = shown.get(d.kind, 0) + 1
            if details or shown[d.kind] <= 3:
                console.print(f"  {d.kind}: {d.task}: {d.where}: {d.message}", markup=False)
    hidden = sum(max(0, n - 3) for n in shown.values())
    if hidden and not details:
        console.print(f"  … {hidden} more (use --details)")
    loaded = sum(1 for t in report.tasks if t.loaded)
    verdict = "[green]no defects[/]" if report.ok else "[red]defects found[/]"
    console.print(f"{loaded}/{len(report.tasks)} tasks loaded; {verdict}")
