"""``--executor``, ``--ray-address`` and ``--config``'s ``[execution]``: where oracle
units run, as the commands that run them take it (the section itself is
:class:`veriscale.execution.settings.ExecutionSettings`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from veriscale.execution import EXECUTORS, Executor
from veriscale.execution.settings import ExecutionSettings
from veriscale.pipeline.config import load_config


def executor_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--executor`` and ``--ray-address``, shared by run, expand, verify and evaluate."""
    f = click.option("--ray-address", "ray_address", default=None, metavar="ADDR",
                     help="Ray cluster to use (implies --executor ray; default: RAY_ADDRESS, "
                          "else a new local Ray).")(f)
    f = click.option("--executor", "executor", type=click.Choice(EXECUTORS), default=None,
                     help="Where oracle units (prover files, sandbox batches) run: local "
                          "(default) or ray.")(f)
    return f


def config_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--config`` for commands that read only ``[execution]`` of a run configuration."""
    return click.option(
        "--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None, help="TOML or JSON run configuration; its [execution] section says "
                           "where oracle units run (--executor/--ray-address win).")(f)


def resolve_execution(executor: str | None, ray_address: str | None,
                      config_path: Path | None = None,
                      section: ExecutionSettings | None = None) -> ExecutionSettings:
    """Where units run, the one resolution shared by run, expand, verify and evaluate.

    ``--ray-address`` (implies Ray) and ``--executor`` win over ``[execution]`` of
    the config (``section`` when the caller already parsed it, else read from
    ``config_path``), which wins over ``RAY_ADDRESS`` for the address; the default
    is the local executor. A config that cannot be read is a click error naming it.
    """
    if section is None and config_path is not None:
        from pydantic import ValidationError

        try:
            section = load_config(config_path).execution
        except (OSError, ValueError, ValidationError) as exc:
            raise click.ClickException(f"{config_path}: {exc}") from exc
    return (section or ExecutionSettings()).resolved(executor, ray_address)


def executor_from_cli(executor: str | None, ray_address: str | None,
                      settings: ExecutionSettings | None = None,
                      config_path: Path | None = None) -> Executor:
    """The executor the options (and the config) ask for; a clear click error when Ray
    is missing."""
    chosen = resolve_execution(executor, ray_address, config_path, settings)
    try:
        return chosen.make()
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
