"""``veriscale run`` and ``veriscale expand``."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from veriscale.benchmark.loader import NotADataset


def _options(f):  # shared by run and expand
    f = click.option("--tasks", default=None, help="Comma-separated task ids (default: all).")(f)
    f = click.option("--seed", type=int, default=None, help="The one seed of every random choice.")(f)
    f = click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False,
                     path_type=Path), default=None, help="TOML or JSON run configuration.")(f)
    f = click.option("--llm", type=click.Choice(["offline", "openai"]), default=None,
                     help="LLM provider (default offline; openai reads [llm] from --config).")(f)
    f = click.option("--runner", type=click.Choice(["auto", "wasm", "native"]), default=None,
                     help="Lean runner (Lean backend only).")(f)
    f = click.option("--backend", type=click.Choice(["python", "lean"]), default=None,
                     help="Oracle backend (default: python for Python-spec tasks, lean for VERINA).")(f)
    f = click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path),
                     required=True, help="Run directory (created; resumed when it exists).")(f)
    f = click.argument("benchmark_dir", type=click.Path(file_okay=False, path_type=Path))(f)
    return f


def _go(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, reduce):
    from veriscale.benchmark.loader import detect_format, task_dirs
    from veriscale.pipeline.config import load_config
    from veriscale.pipeline.run import run_pipeline

    console = Console(stderr=True)
    try:
        dirs = task_dirs(benchmark_dir)
    except NotADataset as exc:
        console.print(f"[red]error:[/] {exc}")
        sys.exit(2)
    overrides: dict = {"seed": seed}
    if tasks:
        overrides["tasks"] = [t.strip() for t in tasks.split(",") if t.strip()]
    config = load_config(config_path, **overrides)
    if backend is None and config_path is None:
        backend = "python" if detect_format(dirs[0]) == "python" else "lean"
    if backend:
        config.backend = backend
    if runner:
        config.backend_options = {**config.backend_options, "runner": runner}
    if llm:
        config.llm = {**config.llm, "provider": llm}
    result = run_pipeline(benchmark_dir, out, config, reduce=reduce, report=reduce, console=console)
    console.print(f"run directory: {result.run_dir}")
    for name in ("plus", "lite", "report.md"):
        path = result.run_dir / name
        if path.exists():
            console.print(f"  {name}: {path}")
    if result.errors:
        console.print(f"[yellow]{len(result.errors)} task(s) failed a stage:[/] "
                      + ", ".join(sorted(result.errors)))
    sys.exit(0)


@click.command("run")
@_options
def run_command(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks):
    """Expand BENCHMARK_DIR into Plus, reduce it to Lite, and write a report into --out."""
    _go(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, reduce=True)


@click.command("expand")
@_options
def expand_command(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks):
    """Run only the expansion stages (seeds, mutation, classification, outputs, adversaries)."""
    _go(benchmark_dir, out, backend, runner, llm, config_path, seed, tasks, reduce=False)
