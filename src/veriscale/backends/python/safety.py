"""The static screen of untrusted Python: a first filter before the sandbox.

It refuses code that names a way out of the restricted builtins (``open``, ``exec``,
frame and code attributes, an allowed module's route to a disallowed one). It is not
the isolation: everything it passes still runs in the sandbox (sandbox.py), under
the OS's isolation; it only turns the obvious attempts into a clear refusal early.
"""

from __future__ import annotations

import ast
import functools
import re

from veriscale.backends.python.worker import SAFE_MODULES

BANNED_NAMES = frozenset(
    {
        "open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars",
        "getattr", "setattr", "delattr", "breakpoint", "input", "help", "exit", "quit",
        "memoryview", "__builtins__", "__loader__", "__spec__", "__build_class__",
    }
)
ALLOWED_DUNDER_ATTRS = frozenset({"__init__", "__name__", "__doc__"})
# Allowed-module functions that turn a *string* into an attribute access or an
# evaluation, out of the static check's sight (``attrgetter('__self__')(len)`` is
# the real builtins, ``get_type_hints`` evaluates string annotations).
REFLECTIVE_NAMES = frozenset(
    {
        "attrgetter", "methodcaller", "Formatter", "get_field", "get_value", "vformat",
        "get_type_hints", "ForwardRef", "evaluate_forward_ref", "_eval_type",
        "get_annotations", "__annotations__",
    }
)
BANNED_ATTRS = frozenset(
    {
        "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "ag_frame", "ag_code",
        "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "tb_frame", "tb_next",
        "co_code", "func_globals", "mro", "modules", "system", "popen",
    }
)


@functools.cache
def module_escape_attrs() -> frozenset[str]:
    """Attribute names through which an allowed module reaches a disallowed one
    (``typing.sys``, ``random._os``, ``dataclasses.builtins``...).

    Computed from the allowed modules themselves, so a new Python version's
    imports are covered; attribute access by these names is rejected whatever
    the base expression, since aliases are easy to hide from a static check.
    """
    import importlib
    import types

    banned: set[str] = set()
    for name in sorted(SAFE_MODULES):
        try:
            mod = importlib.import_module(name)
        except ImportError:  # pragma: no cover - all are stdlib
            continue
        for attr, value in vars(mod).items():
            if (isinstance(value, types.ModuleType)
                    and value.__name__.split(".")[0] not in SAFE_MODULES):
                banned.add(attr)
    return frozenset(banned)



_FORMAT_FIELD_ATTR = re.compile(r"\{[^{}]*[.\[]_")


def check_untrusted_python(source: str) -> str | None:
    """Why ``source`` must not run (``None`` when it passes).

    Rejects syntax errors, imports outside the pure-computation allow-list,
    I/O and reflection builtins, dunder attribute access (the classic
    ``().__class__.__bases__`` escapes) and frame/code introspection. This is a
    first filter; the sandbox stays safe for code that slips past it.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"syntax: {exc.msg} (line {exc.lineno})"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"syntax: {type(exc).__name__}: {exc}"
    for node in ast.walk(tree):
        why = _check_node(node) or _check_annotations(node)
        if why:
            line = getattr(node, "lineno", "?")
            return f"unsafe: {why} (line {line})"
    return None


def _annotations(node: ast.AST) -> list[ast.expr]:
    """The annotation expressions ``node`` carries itself."""
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        return [x.annotation for x in params if x is not None and x.annotation is not None] \
            + ([node.returns] if node.returns is not None else [])
    return []


def _check_annotations(node: ast.AST) -> str | None:
    # Library code evaluates string annotations in the candidate's globals
    # (functools.singledispatch's register through typing.get_type_hints): a
    # string there is code the node walk never saw as code.
    for ann in _annotations(node):
        if any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in ast.walk(ann)):
            return "a string annotation is not allowed (library code evaluates it)"
    return None


def _check_node(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top not in SAFE_MODULES:
                return f"import of {alias.name!r} is not allowed"
    elif isinstance(node, ast.ImportFrom):
        top = (node.module or "").split(".")[0]
        if node.level or top not in SAFE_MODULES:
            return f"import from {node.module or '.'!r} is not allowed"
        for alias in node.names:
            if (alias.name.startswith("_") or alias.name in module_escape_attrs()
                    or alias.name in REFLECTIVE_NAMES):
                return f"import of {alias.name!r} from {node.module!r} is not allowed"
    elif isinstance(node, ast.Name):
        if node.id in BANNED_NAMES or node.id in REFLECTIVE_NAMES:
            return f"use of {node.id!r} is not allowed"
        if node.id.startswith("__") and node.id.endswith("__") and node.id != "__name__":
            return f"use of {node.id!r} is not allowed"
    elif isinstance(node, ast.Attribute):
        attr = node.attr
        if attr.startswith("__") and attr not in ALLOWED_DUNDER_ATTRS:
            return f"access to attribute {attr!r} is not allowed"
        if attr in BANNED_ATTRS or attr in module_escape_attrs() or attr in REFLECTIVE_NAMES:
            return f"access to attribute {attr!r} is not allowed"
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value.strip()
        if text.startswith("__") and text.endswith("__") and len(text) > 4:
            return f"string {text!r} names a dunder attribute"
        if text.startswith("_") and text[1:].isidentifier() and text in module_escape_attrs():
            return f"string {text!r} names a module escape"
        if _FORMAT_FIELD_ATTR.search(node.value):
            return "a format field that reaches a private attribute is not allowed"
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        bad = [n for n in node.names if n.startswith("__")]
        if bad:
            return f"declaration of {bad[0]!r} is not allowed"
    return None
