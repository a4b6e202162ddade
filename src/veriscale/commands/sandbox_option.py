"""``--sandbox auto|os|none``: one option for every command that runs untrusted code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from veriscale.backends import isolation

HELP = ("OS isolation of untrusted code: auto (bubblewrap when it works, else a warning; "
        "model-written code is refused without it), os (refuse to run without it), none "
        "(off, on purpose). Default: $VERISCALE_SANDBOX or auto.")


def sandbox_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--sandbox", type=click.Choice(list(isolation.MODES)), default=None,
                        help=HELP)(f)


def configure_sandbox(mode: str | None, *, untrusted: bool = False) -> isolation.IsolationInfo:
    """Resolve and install the mode for this process; a clean CLI error when ``os`` (or
    ``auto`` for model-written code, ``untrusted``) cannot isolate."""
    try:
        return isolation.configure(mode, untrusted=untrusted)
    except isolation.IsolationUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
