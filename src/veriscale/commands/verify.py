"""``veriscale verify``: re-check a dataset's suite against its own ground truth."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from veriscale.backends.registry import backend_names
from veriscale.commands.execution_options import config_option, executor_from_cli, executor_options
from veriscale.commands.sandbox_option import configure_sandbox, sandbox_option
from veriscale.evaluation.verify import KINDS, Counts, VerifyReport


@click.command("verify")
@click.argument("dataset_dir", type=click.Path(path_type=Path))
@click.option("--backend", "backend_name", type=click.Choice(backend_names()),
              default="python", show_default=True, help="The oracle to check with.")
@click.option("--runner", type=click.Choice(["wasm", "native"]), default=None,
              help="Lean runner (Lean backend only).")
@click.option("--tasks", "task_list", default=None, help="Comma-separated task ids.")
@click.option("--timeout", type=float, default=None,
              help="Time limit in seconds: per check (Python backend) or per Lean file (Lean).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@executor_options
@config_option
@sandbox_option
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Ask the oracle again instead of reusing the oracle cache "
              "($VERISCALE_ORACLE_CACHE or ~/.cache/veriscale/oracle.sqlite).")
def verify_command(dataset_dir: Path, backend_name: str, runner: str | None,
                   task_list: str | None, timeout: float | None, as_json: bool,
                   executor: str | None, ray_address: str | None, config_path: Path | None,
                   sandbox: str | None, no_cache: bool) -> None:
    """Check that DATASET_DIR agrees with its own ground truth: test inputs satisfy
    the GT precondition, reject inputs violate it, expected outputs satisfy the GT
    postcondition, unexpected outputs violate it, and the reference implementation
    reproduces each expected output. Exit status 1 on any disagreement, 2 when
    DATASET_DIR is not a dataset."""
    from veriscale.backends.datasets import NotADataset
    from veriscale.evaluation.verify import verify_dataset

    console = Console(stderr=True)
    info = configure_sandbox(sandbox)
    options: dict[str, object] = {}
    from veriscale.backends.language import plugin_for_backend

    plugin = plugin_for_backend(backend_name)
    if runner is not None and plugin is not None and plugin.backend_takes_runner:
        options["runner"] = runner
    if timeout is not None:
        options["timeout"] = timeout
    ids = [t.strip() for t in task_list.split(",") if t.strip()] if task_list else None
    from veriscale.backends.cache import OracleCache, cache_summary, default_cache_path

    units = executor_from_cli(executor, ray_address, config_path=config_path)
    cache = None if no_cache else OracleCache(default_cache_path())
    try:
        report = verify_dataset(dataset_dir, backend_name, ids, executor=units, cache=cache,
                                **options)
    except NotADataset as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(2)
    finally:
        units.close()
        if cache is not None:
            cache.close()
    for issue in report.load_issues:
        console.print(f"[yellow]load:[/] {escape(str(issue))}")
    if as_json:
        click.echo(json.dumps({**report.to_json(), "isolation": info.to_json(),
                               "oracle_cache": cache_summary(cache)}, indent=2))
    else:
        _print_table(report)
    sys.exit(1 if report.disagreements else 0)


SHORT = {
    "precond_accepts_test_input": "pre:test",
    "precond_rejects_reject_input": "¬pre:rej",
    "postcond_accepts_expected": "post:exp",
    "postcond_rejects_unexpected": "¬post:unx",
    "reference_reproduces_expected": "ref",
}


def _cell(c: Counts) -> str:
    text = f"{c.agree}"
    if c.disagree:
        text += f" [red]✗{c.disagree}[/]"
    if c.unknown:
        text += f" [yellow]?{c.unknown}[/]"
    return text


def _print_table(report: VerifyReport) -> None:
    out = Console()
    table = Table(title=f"verify: {report.tasks} tasks, {report.seconds:.1f} s, "
                        f"{report.processes} backend process(es) "
                        "(agree [red]✗disagree[/] [yellow]?unknown[/])")
    table.add_column("task", no_wrap=True)
    for k in KINDS:
        table.add_column(SHORT[k], justify="right")
    for tid, kinds in report.per_task.items():
        table.add_row(tid, *(_cell(kinds[k]) for k in KINDS))
    table.add_section()
    table.add_row("[bold]total[/]", *(_cell(report.checks[k]) for k in KINDS))
    out.print(table)
    for kind, causes in report.causes_by_kind().items():
        out.print(f"[yellow]unknown[/] {SHORT[kind]}: "
                  + ", ".join(f"{cause} {n}" for cause, n in causes.items()), soft_wrap=True)
    for f in report.findings[:50]:
        out.print(f"[red]disagree[/] {f.task}: {f.kind}: {f.item}: {f.detail}")
    if len(report.findings) > 50:
        out.print(f"... and {len(report.findings) - 50} more disagreements (see --json)")
