"""The ``[execution]`` config section and the command-line options that override it.

Where units run never changes what they answer, so this section is left out
of every stage fingerprint: a run resumed under another executor reuses its
artifacts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import click
from pydantic import BaseModel, ConfigDict, Field

from veriscale.execution import EXECUTORS, Executor, make_executor


class ExecutionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executor: Literal["local", "ray"] = Field(
        "local", description="local: this machine's pools; ray: a Ray cluster")
    address: str | None = Field(
        None, description="Ray cluster address (default: RAY_ADDRESS, else a new local Ray)")
    max_retries: int = Field(3, ge=0, description="Ray retries of a unit whose worker died")
    unit_memory_mb: int | None = Field(
        None, ge=1, description="memory declared per unit, overriding the backend's figure "
        "(Lean ~4096, a sandbox batch its memory limit + 256)")
    concurrent_tasks: int = Field(
        16, ge=1, description="tasks whose oracle calls are in flight at once on a remote "
        "executor (backends without cross-task batching)")

    def resolved(self, executor: str | None = None, address: str | None = None
                 ) -> ExecutionSettings:
        """These settings with command-line choices applied; ``--ray-address`` implies Ray."""
        data = self.model_dump()
        if address:
            data["address"] = address
            data["executor"] = executor or "ray"
        elif executor:
            data["executor"] = executor
        if data["address"] is None:
            data["address"] = os.environ.get("RAY_ADDRESS") or None
        return ExecutionSettings.model_validate(data)

    def make(self) -> Executor:
        return make_executor(self.executor, address=self.address, max_retries=self.max_retries,
                             memory_mb=self.unit_memory_mb)


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

        from veriscale.pipeline.config import load_config

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
