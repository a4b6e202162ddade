"""Atomic file writes: a reader (or a killed run) sees the old file or the new one, never half."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: Path, text: str, *, durable: bool = False) -> None:
    """Write ``text`` to a temporary sibling, then rename it over ``path``.

    Text is written byte for byte (no newline translation), so files read in
    and written back stay identical. ``durable`` also flushes to disk before
    the rename, for state a resumed run relies on.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
