"""``veriscale port``: carry a suite onto another language's twin tasks, audited."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape


@click.command("port")
@click.argument("suite_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--onto", "tasks_dir", required=True, type=click.Path(file_okay=False,
              path_type=Path), help="The twin tasks (same ids) in the target language.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Write the audited, carried suite here (target format).")
@click.option("--backend", "backend_name", default=None,
              help="Oracle for the target (default: detected from TASKS_DIR).")
@click.option("--tasks", "task_list", default=None,
              help="Comma-separated task ids of --onto (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def port_command(suite_dir: Path, tasks_dir: Path, out_dir: Path | None,
                 backend_name: str | None, task_list: str | None, as_json: bool) -> None:
    """Carry SUITE_DIR's rows onto the twin tasks in --onto, re-check every row
    against the target's ground truth and report, per task, the rows where the two
    ground truths disagree and the rows the target cannot decide (both are left out
    of --out). Exit 1 on any disagreement."""
    from veriscale.backends.datasets import NotADataset
    from veriscale.commands.status import Status, hook_backend
    from veriscale.pipeline.config import detect_backend
    from veriscale.port import port_suite

    console = Console(stderr=True)
    tasks = [t.strip() for t in task_list.split(",") if t.strip()] if task_list else None
    try:
        backend = backend_name or detect_backend(tasks_dir, tasks)
        with Status(console, "port: auditing the carried rows") as status:
            report = port_suite(suite_dir, tasks_dir, out_dir, backend, tasks=tasks,
                                on_backend=lambda b: hook_backend(b, status, "port"))
    except (NotADataset, ValueError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        out = Console()
        out.print(f"port: {report.ported_tasks} of {report.tasks} tasks carried; "
                  f"carried {report.carried}, kept {report.kept}, "
                  f"{report.undecided} undecided checks, {report.processes} backend processes, "
                  f"{report.seconds:.1f} s")
        for tid, why in report.skipped.items():
            out.print(f"[yellow]skipped[/] {escape(f'{tid}: {why}')}")
        for tid, causes in sorted(report.dropped_undecided.items()):
            text = ", ".join(f"{c} {n}" for c, n in sorted(causes.items(), key=lambda kv: -kv[1]))
            line = f"{tid}: {sum(causes.values())} rows ({text})"
            out.print(f"[yellow]undecided, left out[/] {escape(line)}")
        for f in report.findings:
            out.print(f"[red]disagree[/] {escape(f'{f.task}: {f.row}: {f.check}: {f.detail}')}")
    sys.exit(1 if report.findings else 0)
