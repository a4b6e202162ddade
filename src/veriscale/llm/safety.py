"""Screening of generated (untrusted) code before it reaches an oracle.

The backends own the authoritative checks
(``veriscale.backends.lean.safety.check_untrusted_lean`` and
``veriscale.backends.python.sandbox.check_untrusted_python``); they are imported
lazily so that the LLM layer does not depend on a backend being importable.
When the Lean one is absent, :func:`lean_fallback_problem` applies the rules of
the architecture (no axiom, sorry, opaque, unsafe, partial, implemented_by,
extern, IO, instances, commands or macros) itself.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

from veriscale.llm.parsers import strip_lean_comments

_FORBIDDEN_WORDS = (
    "axiom", "sorry", "admit", "opaque", "unsafe", "partial", "implemented_by", "extern",
    "instance", "noncomputable", "macro", "macro_rules", "syntax", "elab", "elab_rules",
    "run_cmd", "run_elab", "run_meta", "initialize", "builtin_initialize", "declare_syntax_cat",
    "set_option", "attribute", "export", "local", "scoped", "notation", "infix", "infixl",
    "infixr", "prefix", "postfix", "native_decide", "IO", "ST", "IO.Ref", "ST.Ref", "unsafeIO",
    "unsafeCast", "unsafeBaseIO", "panic!", "dbg_trace", "dbgTrace", "Classical.choice",
    "Classical.choose", "choose_spec", "Classical.ofNonempty", "structure", "inductive",
    "class", "mutual", "import", "namespace", "section", "universe", "Lean.Elab", "Lean.Meta",
)  # fmt: skip
_FORBIDDEN_RE = re.compile(
    r"(?<![\w.'])(" + "|".join(re.escape(w) for w in sorted(_FORBIDDEN_WORDS, key=len)[::-1])
    + r")(?![\w'!])"
)
_COMMAND_RE = re.compile(r"(?m)^\s*#[a-zA-Z_]")
_OPEN_IN_RE = re.compile(r"(?<![\w.'])open\b[^\n]*\bin\b")


def _strip_strings(code: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', code)


def lean_fallback_problem(code: str) -> str | None:
    """Why untrusted Lean ``code`` must not reach Lean (``None`` when it may)."""
    text = _strip_strings(strip_lean_comments(code))
    m = _COMMAND_RE.search(text)
    if m:
        return f"forbidden command {text[m.end() - 2 : m.end() + 10].strip()!r}"
    if _OPEN_IN_RE.search(text):
        return "forbidden 'open ... in'"
    if re.search(r"(?<![\w.'])open\b", text):
        return "forbidden 'open'"
    m = _FORBIDDEN_RE.search(text)
    if m:
        return f"forbidden construct {m.group(1)!r}"
    if "@[" in text:
        attrs = re.findall(r"@\[([^\]]*)\]", text)
        bad = [a for a in attrs if not re.fullmatch(r"\s*(reducible|simp|inline)(\s*,\s*(reducible|simp|inline))*\s*", a)]
        if bad:
            return f"forbidden attribute @[{bad[0].strip()}]"
    return None


def _lazy(module: str, name: str) -> Callable[[str], object] | None:
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def _as_problem(result: object) -> str | None:
    """Normalise a checker's answer: ``None``/``""``/``[]`` pass; anything else is a reason."""
    if not result:
        return None
    if isinstance(result, (list, tuple)):
        return "; ".join(str(r) for r in result)
    return str(result)


def lean_problem(code: str) -> str | None:
    """The Lean backend's verdict on untrusted code, or the fallback rules when it has none."""
    check = _lazy("veriscale.backends.lean.safety", "check_untrusted_lean")
    if check is not None:
        try:
            return _as_problem(check(code))
        except Exception as exc:  # a crashing checker must not let code through
            return f"safety check failed: {type(exc).__name__}: {exc}"
    return lean_fallback_problem(code)


def python_problem(code: str) -> str | None:
    """The Python sandbox's static verdict on untrusted code."""
    check = _lazy("veriscale.backends.python.sandbox", "check_untrusted_python")
    if check is None:  # pragma: no cover - the Python backend ships with the package
        try:
            compile(code, "<candidate>", "exec")
        except (SyntaxError, ValueError) as exc:
            return f"syntax: {exc}"
        return None
    try:
        return _as_problem(check(code))
    except Exception as exc:
        return f"safety check failed: {type(exc).__name__}: {exc}"


def untrusted_problem(code: str, lang: str) -> str | None:
    return python_problem(code) if lang == "python" else lean_problem(code)


def safety_source(lang: str) -> str:
    """Which checker is in force, for the run record."""
    if lang == "python":
        return "veriscale.backends.python.sandbox.check_untrusted_python"
    if _lazy("veriscale.backends.lean.safety", "check_untrusted_lean") is not None:
        return "veriscale.backends.lean.safety.check_untrusted_lean"
    return "veriscale.llm.safety.lean_fallback_problem"
