"""Shared fixtures: the VERINA data in ../shared (tests that need it skip without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERINA = ROOT.parent / "shared" / "data" / "verina"
BUNDLED = ROOT / "src" / "veriscale" / "examples" / "bundled"
BUNDLED_LEAN = ROOT / "src" / "veriscale" / "examples" / "bundled_lean"


@pytest.fixture(scope="session")
def verina_dir() -> Path:
    if not VERINA.is_dir():
        pytest.skip("../shared/data/verina is not present")
    return VERINA


@pytest.fixture(scope="session")
def bundled_dir() -> Path:
    if not BUNDLED.is_dir():
        pytest.skip("bundled benchmark not written yet")
    return BUNDLED


@pytest.fixture(scope="session")
def bundled_lean_dir() -> Path:
    if not BUNDLED_LEAN.is_dir():
        pytest.skip("bundled Lean benchmark not written yet")
    return BUNDLED_LEAN
