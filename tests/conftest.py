"""Shared fixtures: the in-repo examples (required: missing ones fail the tests) and the
VERINA data in ../shared (tests that need it skip without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERINA = ROOT.parent / "shared" / "data" / "verina"
BUNDLED = ROOT / "src" / "veriscale" / "examples" / "bundled"
BUNDLED_LEAN = ROOT / "src" / "veriscale" / "examples" / "bundled_lean"


def pytest_configure(config) -> None:
    """Never the user's oracle cache, not even in module-scoped fixtures."""
    import os
    import tempfile

    os.environ["VERISCALE_ORACLE_CACHE"] = str(
        Path(tempfile.mkdtemp(prefix="veriscale-test-cache-")) / "oracle.sqlite")


@pytest.fixture(autouse=True)
def _private_oracle_cache(tmp_path_factory, monkeypatch) -> None:
    """``evaluate``/``verify`` cache oracle answers per user; each test gets its own file
    (a shared one would answer one test's checks from another's)."""
    monkeypatch.setenv("VERISCALE_ORACLE_CACHE",
                       str(tmp_path_factory.mktemp("cache") / "oracle.sqlite"))


@pytest.fixture(scope="session")
def verina_dir() -> Path:
    if not VERINA.is_dir():
        pytest.skip("../shared/data/verina is not present")
    return VERINA


def _in_repo(path: Path) -> Path:
    """The examples ship with the package: their absence is a broken checkout, not a skip."""
    if not path.is_dir() or not any(path.iterdir()):
        pytest.fail(f"in-repo examples missing: {path}")
    return path


@pytest.fixture(scope="session")
def bundled_dir() -> Path:
    return _in_repo(BUNDLED)


@pytest.fixture(scope="session")
def bundled_lean_dir() -> Path:
    return _in_repo(BUNDLED_LEAN)
