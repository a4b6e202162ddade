"""What the scoring commands (``evaluate``, ``leaderboard``) share: reading suites,
``--backend-option`` values, and one oracle (backend, executor, oracle cache) opened
and closed as a unit, so each command holds only what it scores."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.registry import make_backend
from veriscale.commands.execution_options import executor_from_cli


def backend_options(runner: str | None, options: tuple[str, ...],
                    timeout: float | None = None) -> dict[str, Any]:
    """``--runner``, ``--timeout`` and each ``-o KEY=VALUE`` (a JSON value, else text)."""
    opts: dict[str, Any] = {}
    if runner:
        opts["runner"] = runner
    for item in options:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"backend option must be KEY=VALUE, got {item!r}")
        try:
            opts[key] = json.loads(raw)
        except json.JSONDecodeError:
            opts[key] = raw
    if timeout is not None:
        opts["timeout"] = timeout
    return opts


def load_suite(suite: Path, tasks: tuple[str, ...], console: Console, quiet: bool
               ) -> tuple[list[Any], list[str]]:
    """A suite's tasks (``tasks`` only, when given) and its load issues, the first ten
    printed unless ``quiet``."""
    loaded, issues = load_benchmark(suite, list(tasks) or None)
    if issues and not quiet:
        console.print(f"[yellow]{escape(str(suite))}: {len(issues)} load issue(s)[/]")
        for issue in issues[:10]:
            console.print(escape(f"  {issue}"))
    return loaded, [f"{suite}: {i}" for i in issues]


def with_isolation(data: dict[str, Any]) -> dict[str, Any]:
    """``--json`` output says which OS isolation the candidates ran under."""
    from veriscale.backends import isolation

    return {**data, "isolation": isolation.current().to_json()}


def percent(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


@dataclass
class Oracle:
    backend: Any  # what to ask: the backend, behind the oracle cache unless --no-cache
    cache: Any  # the OracleCache, or None


@contextmanager
def open_oracle(name: str, options: dict[str, Any], *, executor: str | None,
                ray_address: str | None, config_path: Path | None,
                no_cache: bool) -> Iterator[Oracle]:
    """The backend ``name`` on the chosen executor, behind the oracle cache; all three
    closed on the way out, whatever happened inside."""
    from veriscale.backends.cache import OracleCache, default_cache_path, with_cache

    units = executor_from_cli(executor, ray_address, config_path=config_path)
    try:
        backend = make_backend(name, executor=units, **options)
        try:
            cache = None if no_cache else OracleCache(default_cache_path())
            try:
                yield Oracle(backend if cache is None else with_cache(backend, cache), cache)
            finally:
                if cache is not None:
                    cache.close()
        finally:
            backend.close()
    finally:
        units.close()
