"""Backend construction by name, so stages and commands never import a concrete backend.

Each language plug-in names its backend (``backend``) and the class that implements
it (``backend_path``); this module only looks them up.
"""

from __future__ import annotations

import importlib
from typing import Any

from veriscale.backends.base import Backend
from veriscale.backends.language import plugin_for_backend, plugins


def backend_names() -> list[str]:
    return [p.backend for p in plugins()]


def backend_class(name: str) -> type:
    """The class of the backend ``name`` (what it can do, before making one)."""
    plugin = plugin_for_backend(name)
    if plugin is None:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(backend_names())}")
    module_name, _, cls_name = plugin.backend_path.partition(":")
    return getattr(importlib.import_module(module_name), cls_name)  # type: ignore[no-any-return]


def make_backend(name: str, **options: Any) -> Backend:
    """A backend by name; ``options`` go to its constructor (runner, timeout, workers...)."""
    return backend_class(name)(**options)  # type: ignore[no-any-return]
