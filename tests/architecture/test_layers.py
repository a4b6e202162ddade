"""Packages import one way (issue 33): no circle between packages, the neutral core
imports no language plug-in and nothing above it, and a plug-in imports only the core
(never another plug-in, the LLM layer, the stages or the pipeline).

A package is a top-level package or module of ``veriscale``; each language plug-in
(``backends/<language>/``) and the OS isolation layer are packages of their own, and
the rest of ``backends/`` is the oracle core.
"""

from __future__ import annotations

from pathlib import Path

from test_import_circles import circles, imports_of, modules

SRC = Path(__file__).resolve().parents[2] / "src"
PLUGINS = ("backends.lean", "backends.python", "backends.coq")

CORE = {
    "veriscale": {"veriscale"},  # the package root: its version only
    "atomic": {"veriscale"},
    "values": {"veriscale"},
    "benchmark": {"veriscale", "values", "atomic"},
    "artifacts": {"veriscale", "values", "benchmark", "atomic"},
    "rundir": {"veriscale", "values", "benchmark", "atomic", "artifacts"},
    "execution": {"veriscale"},
    "backends.isolation": {"veriscale", "execution"},
    "backends": {"veriscale", "values", "benchmark", "atomic", "execution",
                 "backends.isolation"},
}
"""What each package of the neutral core may import (besides itself)."""

PLUGIN_MAY_IMPORT = set(CORE)
"""A language plug-in builds on the core only."""

PLUGIN_MAY_NOT_IMPORT = ("veriscale.benchmark.validate",)
"""Core modules a plug-in still must not use: ``validate`` judges what a plug-in
reads (the plug-in gives its rows; it never lints itself)."""


def package_of(module: str, known: dict[str, Path]) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "veriscale"
    if parts[0] == "backends" and len(parts) > 1 and f"backends.{parts[1]}" in (
            *PLUGINS, "backends.isolation"):
        return f"backends.{parts[1]}"
    return parts[0]


def package_graph(src: Path = SRC) -> dict[str, dict[str, set[str]]]:
    """package → imported package → the module imports behind that edge."""
    known = modules(src)
    graph: dict[str, dict[str, set[str]]] = {}
    for name, path in known.items():
        a = package_of(name, known)
        for target in imports_of(name, path, known):
            b = package_of(target, known)
            if a != b:
                graph.setdefault(a, {}).setdefault(b, set()).add(f"{name} -> {target}")
    return graph


def _edges(graph: dict[str, dict[str, set[str]]], pkg: str, allowed: set[str]) -> list[str]:
    return [f"{pkg} -> {b}: {sorted(why)[0]}" for b, why in sorted(graph.get(pkg, {}).items())
            if b not in allowed]


def test_no_circle_between_packages() -> None:
    graph = package_graph()
    assert circles({a: set(bs) for a, bs in graph.items()}) == []


def test_the_core_imports_no_plugin_and_nothing_above_it() -> None:
    graph = package_graph()
    bad = [e for pkg, allowed in CORE.items() for e in _edges(graph, pkg, allowed)]
    assert not bad, "\n".join(bad)


def test_plugins_build_on_the_core_only() -> None:
    graph = package_graph()
    assert all(p in graph for p in PLUGINS)
    bad = [e for pkg in PLUGINS for e in _edges(graph, pkg, PLUGIN_MAY_IMPORT)]
    assert not bad, "\n".join(bad)


def test_plugins_do_not_judge_their_own_folders() -> None:
    graph = package_graph()
    bad = [edge for pkg in PLUGINS for why in graph.get(pkg, {}).values() for edge in why
           if edge.split(" -> ")[1].startswith(PLUGIN_MAY_NOT_IMPORT)]
    assert not bad, "\n".join(sorted(bad))


def test_the_checks_see_a_wrong_direction(tmp_path: Path) -> None:
    """A plug-in importing the LLM layer, and the core importing a plug-in, are found."""
    root = tmp_path / "veriscale"
    for folder in ("", "llm", "values", "backends", "backends/lean"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "__init__.py").write_text("")
    (root / "llm" / "parsers.py").write_text("X = 1\n")
    (root / "backends" / "lean" / "answers.py").write_text(
        "def f():\n    from veriscale.llm.parsers import X\n")
    (root / "values" / "types.py").write_text("from veriscale.backends.lean import answers\n")
    graph = package_graph(tmp_path)
    assert _edges(graph, "backends.lean", PLUGIN_MAY_IMPORT) == [
        "backends.lean -> llm: veriscale.backends.lean.answers -> veriscale.llm.parsers"]
    assert _edges(graph, "values", CORE["values"]) == [
        "values -> backends.lean: veriscale.values.types -> veriscale.backends.lean.answers"]
