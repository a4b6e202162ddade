"""Backend construction by name, so stages and commands never import a concrete backend."""

from __future__ import annotations

import importlib
from typing import Any

from veriscale.backends.base import Backend

_BACKENDS = {
    "python": ("veriscale.backends.python.backend", "PythonBackend"),
    "lean": ("veriscale.backends.lean.backend", "LeanBackend"),
    "coq": ("veriscale.backends.coq.backend", "CoqBackend"),
}


def backend_names() -> list[str]:
    return list(_BACKENDS)


def backend_class(name: str) -> type:
    """The class of the backend ``name`` (what it can do, before making one)."""
    if name not in _BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(_BACKENDS)}")
    module_name, cls_name = _BACKENDS[name]
    return getattr(importlib.import_module(module_name), cls_name)  # type: ignore[no-any-return]


def make_backend(name: str, **options: Any) -> Backend:
    """A backend by name; ``options`` go to its constructor (runner, timeout, workers...)."""
    return backend_class(name)(**options)  # type: ignore[no-any-return]
