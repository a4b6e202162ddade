"""``veriscale coverage``: how much of each task's ground-truth code a suite's tests run.

The paper claims its augmented suites keep the reference's full code coverage; this
measures it, per suite, where the language allows (Python, with coverage.py). For the
other languages it says why not, per task.
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

from veriscale.commands.oracle import percent
from veriscale.commands.sandbox_option import configure_sandbox, sandbox_option
from veriscale.evaluation.coverage import suite_coverage


@click.command("coverage")
@click.argument("suites", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--tasks", "task_list", default=None, help="Comma-separated task ids.")
@click.option("--per-task", "per_task", is_flag=True, help="Also each task's figures.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@sandbox_option
def coverage_command(suites: tuple[Path, ...], task_list: str | None, per_task: bool,
                     as_json: bool, sandbox: str | None) -> None:
    """Code coverage of each task's ground-truth code (the reference and its helpers)
    by the inputs of each SUITE's tests, line and branch, as coverage.py counts them.
    Give the original suite, Plus and Lite to see what each keeps. The reference runs
    in the sandbox. Languages that cannot measure it (Lean, Coq) say why. Exit status
    2 when a SUITE is not a dataset."""
    from veriscale.backends.datasets import NotADataset

    configure_sandbox(sandbox)
    ids = [t.strip() for t in task_list.split(",") if t.strip()] if task_list else None
    backends: dict[str, Any] = {}
    results = []
    try:
        for suite in suites:
            results.append(suite_coverage(suite, ids, backends))
    except NotADataset as exc:
        Console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(2)
    finally:
        for backend in backends.values():
            backend.close()
    if as_json:
        if not per_task:
            results = [{k: v for k, v in r.items() if k != "per_task"} for r in results]
        click.echo(json.dumps({"suites": results}, indent=2))
        return
    console = Console()
    table = Table(title="Coverage of the ground-truth code by each suite")
    for col in ("suite", "tasks measured", "lines", "line %", "branches", "branch %",
                "fully covered"):
        table.add_column(col, justify="left" if col == "suite" else "right")
    for r in results:
        table.add_row(escape(r["suite"]), f"{r['tasks_measured']}/{r['tasks']}",
                      f"{r['lines_covered']}/{r['lines_total']}", percent(r["line_coverage"]),
                      f"{r['branches_covered']}/{r['branches_total']}",
                      percent(r["branch_coverage"]), str(r["tasks_fully_covered"]))
    console.print(table)
    for r in results:
        for why in r["not_available"]:
            console.print(f"{escape(r['suite'])}: not available for some tasks: {escape(why)}")
    if per_task:
        for r in results:
            each = Table(title=f"{r['suite']}: per task")
            for col in ("task", "lines", "branches", "missing lines"):
                each.add_column(col)
            for tid, row in sorted(r["per_task"].items()):
                if not row["available"]:
                    each.add_row(escape(tid), "—", "—", escape(row["reason"]))
                    continue
                each.add_row(escape(tid), f"{row['lines_covered']}/{row['lines_total']}",
                             f"{row['branches_covered']}/{row['branches_total']}",
                             ", ".join(map(str, row["missing_lines"])))
            console.print(each)
