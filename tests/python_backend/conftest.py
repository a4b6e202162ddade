"""Fixtures of the Python backend tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyb_helpers import write_task


@pytest.fixture()
def task_dir(tmp_path: Path) -> Path:
    return write_task(tmp_path / "bench")
