"""``veriscale run`` and ``veriscale expand``."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from veriscale.backends.datasets import NotADataset
from veriscale.backends.registry import backend_names
from veriscale.commands.execution_options import (
    executor_from_cli,
    executor_options,
    resolve_execution,
)
from veriscale.commands.sandbox_option import configure_sandbox, sandbox_option


def _options(f):  # shared by run and expand
    f = sandbox_option(f)
    f = executor_options(f)
    f = click.option("--log", "log_file", type=click.Path(dir_okay=False, path_type=Path),
                     default=None, help="Append the run's diagnostic log (INFO: each prover "
                     "file's size and time, each stop with the check it was on) to this file.")(f)
    f = click.option("--no-cache", "no_cache", is_flag=True,
                     help="Ask the oracle again instead of reusing RUN/oracle_cache.sqlite.")(f)
    f = click.option("--tasks", default=None, help="Comma-separated task ids (default: all).")(f)
    f = click.option("--seed", type=int, default=None, help="The one seed of every random choice.")(f)
    f = click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False,
                     path_type=Path), default=None, help="TOML or JSON run configuration.")(f)
    f = click.option("--llm", type=click.Choice(["offline", "openai"]), default=None,
                     help="LLM provider (default offline; openai reads [llm] from --config).")(f)
    f = click.option("--runner", type=click.Choice(["auto", "wasm", "native"]), default=None,
                     help="Lean runner (Lean backend only).")(f)
    f = click.option("--backend", type=click.Choice(backend_names()), default=None,
                     help="Oracle backend (default: python for Python-spec tasks, lean for VERINA).")(f)
    f = click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path),
                     required=True, help="Run directory (created; resumed when it exists).")(f)
    f = click.argument("benchmark_dir", type=click.Path(file_okay=False, path_type=Path))(f)
    return f


EXIT_TASK_FAILED = 1
"""Some task failed a stage: the suites miss it (or the previous ones were kept)."""
EXIT_USAGE = 2
EXIT_LOCKED = 3
EXIT_LLM_UNAVAILABLE = 4
"""The LLM endpoint cannot answer (key, model, every request failing); nothing was faked."""
EXIT_UNWRITABLE = 5
EXIT_PROVISIONAL = 6
"""Every task finished, but some records were built from a fallback after failed LLM
requests (provisional): the suites are usable, and rerunning the same command asks
only those again."""


def _go(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, executor,
        ray_address, no_cache, reduce, sandbox=None, accept_multiple=None, audit=None,
        log_file=None):
    from pydantic import ValidationError

    from veriscale.backends.datasets import task_dirs
    from veriscale.pipeline.config import load_config
    from veriscale.pipeline.run import run_pipeline
    from veriscale.rundir import RunDirLocked

    console = Console(stderr=True)
    if log_file is not None:
        _log_to(log_file, console)
    try:
        task_dirs(benchmark_dir)
    except NotADataset as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(EXIT_USAGE)
    overrides: dict = {"seed": seed, "backend": backend}
    if tasks:
        overrides["tasks"] = [t.strip() for t in tasks.split(",") if t.strip()]
    try:
        config = load_config(config_path, **overrides)  # backend unset: detected by the run
    except (OSError, ValueError, ValidationError) as exc:
        console.print(f"[red]error:[/] {escape(f'{config_path}: {exc}')}")
        sys.exit(EXIT_USAGE)
    if runner:
        config.backend_options = {**config.backend_options, "runner": runner}
    if llm:
        config.llm = {**config.llm, "provider": llm}
    if sandbox:
        config.sandbox = sandbox
    if accept_multiple:
        config.audit.accept_multiple = sorted({*config.audit.accept_multiple,
                                               *accept_multiple})
    # an LLM's adversaries are model-written code: auto refuses to run them unisolated
    configure_sandbox(config.sandbox,
                      untrusted=str(config.llm.get("provider") or "offline") != "offline")
    config.execution = resolve_execution(executor, ray_address, section=config.execution)
    executor_from_cli(None, None, config.execution).close()  # Ray missing: a clear error now
    from veriscale.llm.client import LLMUnavailable

    try:
        result = run_pipeline(benchmark_dir, out, config, reduce=reduce, report=reduce,
                              console=console, cache=not no_cache)
    except RunDirLocked as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(EXIT_LOCKED)
    except LLMUnavailable as exc:
        console.print("[bold red]error:[/] "
                      + escape(f"the LLM endpoint is unusable, run stopped: {exc}"))
        console.print(escape("  Finished stages are kept; fix [llm] (key, model, base_url) and "
                             "rerun to resume, or set fallback = \"offline\" in [llm] to "
                             "continue without it."))
        sys.exit(EXIT_LLM_UNAVAILABLE)
    except OSError as exc:  # e.g. a read-only run directory: per-task writes are caught
        where = f": {exc.filename}" if exc.filename else ""
        console.print("[red]error:[/] " + escape(f"cannot write the run directory {out}{where}: "
                                                 f"{exc.strerror or exc}"))
        sys.exit(EXIT_UNWRITABLE)
    console.print(escape(f"run directory: {result.run_dir}"))
    if result.oracle_cache.get("enabled"):
        console.print(f"  oracle cache: {result.oracle_cache['hits']} hits, "
                      f"{result.oracle_cache['misses']} misses")
    for name in ("plus", "lite", "report.md"):
        path = result.run_dir / name
        if path.exists():
            console.print(escape(f"  {name}: {path}"))
    if result.degraded:  # suites written, weaker than they should be: said, not fatal
        console.print(f"[yellow]{len(result.degraded)} task(s) degraded:[/]")
        for task_id, causes in sorted(result.degraded.items()):
            console.print(escape(f"  {task_id}: {'; '.join(causes)}"))
    if result.contradicted:  # left out of the suites, listed in report.md
        rows = sum(len(r) for r in result.contradicted.values())
        console.print(f"[yellow]{rows} original row(s) of {len(result.contradicted)} task(s) "
                      "left out of Plus and Lite: the ground truth contradicts them[/]")
        for task_id, bad in sorted(result.contradicted.items()):
            for r in bad:
                console.print(escape(f"  {task_id}: {json.dumps(r['input'])}: {r['why']}"))
    _audit_out(result.run_dir, console, audit)
    if result.provisional:
        console.print(f"[yellow]warning: {len(result.provisional)} task(s) have provisional "
                      "records (LLM requests failed; a fallback stands in):[/]")
        for task_id, stages in sorted(result.provisional.items()):
            for stage, failures in sorted(stages.items()):
                console.print(escape(f"  {task_id}: stage {stage}: {'; '.join(failures)}"))
        console.print(escape("  rerun the same command to ask them again: veriscale "
                             + shlex.join(sys.argv[1:])))
    if result.errors:
        console.print(f"[red]{len(result.errors)} task(s) failed:[/]")
        for task_id, err in sorted(result.errors.items()):
            console.print(escape(f"  {task_id}: stage {err['stage']}: {err['error']}"))
        sys.exit(EXIT_TASK_FAILED)
    sys.exit(EXIT_PROVISIONAL if result.provisional else 0)


def _log_to(path: Path, console: Console) -> None:
    """The package's INFO records appended to ``path``: what a slow or stopped run is
    diagnosed by, without changing what the console shows."""
    import logging

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError as exc:
        console.print("[red]error:[/] " + escape(f"--log {path}: {exc.strerror or exc}"))
        sys.exit(EXIT_USAGE)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    handler.setLevel(logging.INFO)
    root = logging.getLogger("veriscale")
    root.addHandler(handler)
    if root.getEffectiveLevel() > logging.INFO:
        root.setLevel(logging.INFO)


def _audit_out(run_dir: Path, console: Console, how: str | None) -> None:
    """The ground-truth audit: a line for run and expand, the findings for audit
    (a table, or with ``json`` one JSON object on stdout)."""
    path = run_dir / "audit.json"
    if not path.exists():
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    if how == "json":
        click.echo(json.dumps(data, indent=1, ensure_ascii=False))
        return
    by_kind = ", ".join(f"{k} {n}" for k, n in data.get("tasks_flagged_by_kind", {}).items())
    console.print(escape(f"  audit: {data.get('tasks_flagged', 0)} of {data.get('tasks', 0)} "
                         f"task(s) flagged{': ' + by_kind if by_kind else ''} ({path})"))
    if how != "table":
        return
    from rich.table import Table

    table = Table(title="ground-truth audit (smallest witness; several-answer tasks last)")
    for col in ("task", "kind", "count", "several", "witness"):
        table.add_column(col, overflow="fold")
    for f in data.get("findings", []):
        table.add_row(escape(f["task"]), escape(f["kind"]), str(f["count"]),
                      "yes" if f.get("several_answers") else "",
                      escape(json.dumps(f["witness"], ensure_ascii=False)))
    Console().print(table)


@click.command("run")
@_options
def run_command(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, executor,
                ray_address, sandbox, no_cache, log_file):
    """Expand BENCHMARK_DIR into Plus, reduce it to Lite, and write a report into --out."""
    _go(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, executor,
        ray_address, no_cache, reduce=True, sandbox=sandbox, log_file=log_file)


@click.command("expand")
@_options
def expand_command(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, executor,
                   ray_address, sandbox, no_cache, log_file):
    """Run only the expansion stages (seeds, mutation, classification, outputs, adversaries)."""
    _go(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, executor,
        ray_address, no_cache, reduce=False, sandbox=sandbox, log_file=log_file)


@click.command("audit")
@_options
@click.option("--accept-multiple", "accept_multiple", default=None, metavar="TASK,...",
              help="Tasks whose several valid answers a maintainer judged: their findings "
              "are listed apart, not flagged (also [audit] accept_multiple in --config).")
@click.option("--json", "as_json", is_flag=True,
              help="Print audit.json (one JSON object with its list of findings) on stdout.")
def audit_command(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, executor,
                  ray_address, sandbox, no_cache, log_file, accept_multiple, as_json):
    """Audit BENCHMARK_DIR's own ground truth: run the expansion stages into --out
    (resumable, as expand) and list where the task's code, specification and tests
    disagree, each finding with its smallest witness (RUN/audit.json)."""
    accepted = [t.strip() for t in (accept_multiple or "").split(",") if t.strip()]
    _go(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, executor,
        ray_address, no_cache, reduce=False, sandbox=sandbox, accept_multiple=accepted,
        audit="json" if as_json else "table", log_file=log_file)
