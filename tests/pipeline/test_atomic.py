"""Written files follow the umask (a shared group can read a suite)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from veriscale.atomic import write_text_atomic


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_written_files_follow_the_umask(tmp_path: Path, umask: int, mode: int):
    old = os.umask(umask)
    try:
        write_text_atomic(tmp_path / "a.json", "{}\n")
        write_text_atomic(tmp_path / "a.json", "[]\n")  # a replacement too
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == mode
    assert (tmp_path / "a.json").read_text() == "[]\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]
