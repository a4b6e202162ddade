"""Fake tools (a ``lean``, an ``npm``) written in Python, runnable from any checkout.

A ``#!/path/to/python`` line breaks where that path holds a space (the kernel splits
it there), so the tool is a ``/bin/sh`` script that runs this interpreter on the
Python source beside it. The prover sandbox binds this interpreter's prefix
(``isolation.interpreter_paths``), so it runs under /tmp clones too.
"""

from __future__ import annotations

import shlex
import stat
import sys
from pathlib import Path


def python_script(path: Path, source: str) -> Path:
    """Write ``source`` as the executable tool ``path`` (its code in ``path.py``)."""
    code = path.with_name(path.name + ".py")
    code.write_text(source)
    path.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} "
                    f"{shlex.quote(str(code))} \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path
