"""A long command says what it is doing in a log too (no terminal: no spinner)."""

from __future__ import annotations

import io
import time

from rich.console import Console

from veriscale.commands.status import Status, hook_backend


class _Prover:
    name = "toy"

    def __init__(self) -> None:
        self.progress = None


def test_without_a_terminal_a_line_comes_every_so_often() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=200)
    prover = _Prover()
    with Status(console, "port: auditing", every=0.05) as status:
        unhook = hook_backend(prover, status, "port")
        prover.progress("planned", 2, 10)
        prover.progress("done", 1, 4)
        time.sleep(0.3)
        unhook()
    text = buf.getvalue()
    assert "port: toy files 1/2, checks 4/10" in text and "elapsed" in text
    assert prover.progress is None  # unhooked
