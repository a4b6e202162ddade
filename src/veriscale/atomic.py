"""Atomic file writes: a reader (or a killed run) sees the old file or the new one, never half."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_text_atomic(path: Path, text: str, *, durable: bool = False) -> None:
    """Write ``text`` to a temporary sibling, then rename it over ``path``.

    Text is written byte for byte (no newline translation), so files read in
    and written back stay identical. ``durable`` also flushes to disk before
    the rename, for state a resumed run relies on.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Created 0666 minus the umask, like any file (mkstemp's 0600 would hide a suite
    # from a shared group); O_EXCL and a random name keep it private to this writer.
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
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


def write_files_atomic(folder: Path, files: dict[str, str]) -> Path:
    """Write each named text of ``files`` into ``folder`` (created if needed), each file
    replaced atomically. The texts are encoded by the caller first, so a value that
    cannot be encoded leaves no half-written folder behind."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_text_atomic(folder / name, text)
    return folder
