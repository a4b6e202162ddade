"""Where VERINA's Coq track is (``../shared`` of the project root, or of the
main checkout when this is a worktree); tests that need it skip without it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _shared() -> Path:
    env = os.environ.get("VERISCALE_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [ROOT.parent / "shared", ROOT.parent.parent / "shared"]
    return next((c for c in candidates if c.is_dir()), candidates[0] if env else ROOT.parent / "shared")


SHARED = _shared()
DATA = SHARED / "data" / "verina-coq"
LEAN_DATA = SHARED / "data" / "verina"
COQC = shutil.which("coqc")
needs_coqc = pytest.mark.skipif(COQC is None, reason="coqc is not on PATH (apt-get install coq)")
