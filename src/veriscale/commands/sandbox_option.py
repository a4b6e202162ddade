"""``--sandbox auto|os|none``: one option for every command that runs untrusted code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from veriscale.backends import isolation

HELP = ("OS isolation of untrusted code: auto (bubblewrap when it works, else a warning), "
        "os (refuse to run without it), none (off). Default: $VERISCALE_SANDBOX or auto.")


def sandbox_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--sandbox", type=click.Choice(list(isolation.MODES)), default=None,
                        help=HELP)(f)


def configure_sandbox(mode: str | None) -> isolation.IsolationInfo:
    """Resolve and install the mode for this process; a clean CLI error when ``os`` cannot."""
    try:
        return isolation.configure(mode)
    except isolation.IsolationUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
