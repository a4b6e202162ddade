"""Shared fixtures: the in-repo examples (required: missing ones fail the tests) and the
VERINA data in ../shared (tests that need it skip without it)."""

from __future__ import annotations

import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
VERINA = ROOT.parent / "shared" / "data" / "verina"
BUNDLED = ROOT / "src" / "veriscale" / "examples" / "bundled"
BUNDLED_LEAN = ROOT / "src" / "veriscale" / "examples" / "bundled_lean"


# Shared machines are noisy: a Hypothesis example is judged by what it finds, never by
# how long one example took (the default 200 ms deadline flaked under load).
settings.register_profile("veriscale", deadline=None)
settings.load_profile("veriscale")


def pytest_configure(config) -> None:
    """Never the user's oracle cache, not even in module-scoped fixtures."""
    import os
    import tempfile

    config._veriscale_cache_dir = tempfile.mkdtemp(prefix="veriscale-test-cache-")
    os.environ["VERISCALE_ORACLE_CACHE"] = str(Path(config._veriscale_cache_dir) / "oracle.sqlite")


def pytest_unconfigure(config) -> None:
    import shutil

    where = getattr(config, "_veriscale_cache_dir", None)
    if where:
        shutil.rmtree(where, ignore_errors=True)


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


# ---------------------------------------------------------------- real-Lean jobs, overlapped
#
# Each Lean-marked module does its real-Lean work in one module-level function,
# ``background_lean_job()``, and its tests read the result through the
# ``lean_job`` fixture. When collection selects Lean tests, every selected
# module's job starts at once (longest first), one thread per core: the
# pipeline test's Lean rounds are sequential, so the other modules' files run
# on the otherwise idle core, and the Lean tests take about as long as the
# longest job, not the sum of all.

_LEAN_JOBS: dict[str, Future] = {}
_LEAN_POOL: ThreadPoolExecutor | None = None


def pytest_collection_finish(session: pytest.Session) -> None:
    global _LEAN_POOL
    if session.config.option.collectonly:
        return
    modules: dict[str, Any] = {}
    for item in session.items:
        module = getattr(item, "module", None)
        if item.get_closest_marker("lean") and hasattr(module, "background_lean_job"):
            modules.setdefault(module.__name__, module)
    if not modules:
        return
    _LEAN_POOL = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1),
                                    thread_name_prefix="lean-job")
    order = sorted(modules.values(), key=lambda m: -getattr(m, "LEAN_JOB_WEIGHT", 1))
    for module in order:
        _LEAN_JOBS[module.__name__] = _LEAN_POOL.submit(module.background_lean_job)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _LEAN_POOL is not None:
        _LEAN_POOL.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def lean_job(request: pytest.FixtureRequest) -> Any:
    """The result of this module's ``background_lean_job`` (run here if not started)."""
    future = _LEAN_JOBS.get(request.module.__name__)
    if future is None:
        return request.module.background_lean_job()
    return future.result()


# ---------------------------------------------------------------- CI: skips that must not be
#
# Where CI installed bubblewrap, Coq and QuickChick, a test that skips for want of one
# of them hides that isolation or a prover was never exercised (the WASM Lean installs
# itself on first use: its tests fail rather than skip). With VERISCALE_CI_STRICT=1 (set by .ci/run) such a skip is a failure;
# and every run ends with how many tests of each kind ran.

STRICT_ENV = "VERISCALE_CI_STRICT"
_MUST_RUN = re.compile(r"bubblewrap|bwrap|coqc|quickchick|\bcoq\b", re.IGNORECASE)
_KINDS = ("lean", "coq", "ray", "slow")
_TALLY: dict[str, dict[str, int]] = {}


def _strict() -> bool:
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


def _skip_reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _kinds_of(item: Any) -> list[str]:
    marks = {m.name for m in item.iter_markers()}
    kinds = [k for k in _KINDS if k in marks]
    path = item.nodeid.split("::", 1)[0]
    if path.startswith(("tests/isolation/", "tests/conformance/")) or "sandbox" in path:
        kinds.append("isolation")
    return kinds or ["other"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    report.veriscale_kinds = _kinds_of(item)
    if report.skipped and _strict() and _MUST_RUN.search(_skip_reason(report)):
        report.outcome = "failed"
        report.longrepr = (f"{STRICT_ENV}: skipped where it must run "
                           f"({_skip_reason(report)})")


@pytest.hookimpl(tryfirst=True)  # before the terminal files it under skips
def pytest_collectreport(report: Any) -> None:
    if report.skipped and _strict() and _MUST_RUN.search(_skip_reason(report)):
        report.outcome = "failed"
        report.longrepr = (f"{STRICT_ENV}: a module skipped where it must run "
                           f"({_skip_reason(report)})")


def pytest_runtest_logreport(report: Any) -> None:
    ran = report.when == "call"
    skipped = report.skipped and report.when in ("setup", "call")
    if not (ran or skipped):
        return
    for kind in getattr(report, "veriscale_kinds", None) or ["other"]:
        row = _TALLY.setdefault(kind, {"ran": 0, "skipped": 0})
        row["skipped" if report.skipped else "ran"] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Per kind of test (marker; isolation: the sandbox, isolation and conformance
    tests), how many ran and how many skipped."""
    if not _TALLY:
        return
    terminalreporter.section("tests per kind")
    for kind in (*_KINDS, "isolation", "other"):
        row = _TALLY.get(kind)
        if row:
            terminalreporter.write_line(f"{kind:>10}: {row['ran']} ran, {row['skipped']} skipped")
