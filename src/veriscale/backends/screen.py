"""The static screen for untrusted code, by language: one policy per language, owned
by its backend (Lean: :mod:`veriscale.backends.lean.safety`; Python: the sandbox's
``check_untrusted_python``). Stages that screen generated code before it reaches an
oracle (the LLM layer) ask here, so there is no second copy of a policy.
"""

from __future__ import annotations


def untrusted_problem(code: str, lang: str, kind: str = "commands") -> str | None:
    """Why untrusted ``code`` must not reach an oracle (``None`` when it may).

    ``kind`` (Lean only): ``"commands"`` for definitions and implementations,
    ``"term"`` for a specification body. A checker that raises rejects the code.
    """
    try:
        from veriscale.backends.language import has_plugin, plugin_for

        if has_plugin(lang):
            plugin = plugin_for(lang)
            return plugin.screen_body(code) if kind == "term" else plugin.screen(code)
        if lang == "python":
            from veriscale.backends.python.sandbox import check_untrusted_python

            return check_untrusted_python(code) or None
        from veriscale.backends.lean.safety import check_untrusted_lean

        return check_untrusted_lean(code, kind)
    except Exception as exc:  # a crashing checker must not let code through
        return f"safety check failed: {type(exc).__name__}: {exc}"


def screen_name(lang: str) -> str:
    """Which checker is in force, for the run record."""
    from veriscale.backends.language import has_plugin

    if has_plugin(lang):
        return f"veriscale.backends.{lang}.safety"
    if lang == "python":
        return "veriscale.backends.python.sandbox.check_untrusted_python"
    return "veriscale.backends.lean.safety.check_untrusted_lean"
