"""The static screen for untrusted code: one policy per language, owned by its
language plug-in (``screen`` / ``screen_body``). Stages that screen generated code
before it reaches an oracle (the LLM layer) ask here, so there is no second copy of
a policy.
"""

from __future__ import annotations


def untrusted_problem(code: str, lang: str, kind: str = "commands") -> str | None:
    """Why untrusted ``code`` must not reach an oracle (``None`` when it may).

    ``kind``: ``"commands"`` for definitions and implementations, ``"term"`` for a
    specification body (Lean and Coq screen the two differently). A checker that
    raises rejects the code.
    """
    try:
        from veriscale.backends.language import plugin_for

        plugin = plugin_for(lang)
        return plugin.screen_body(code) if kind == "term" else plugin.screen(code)
    except Exception as exc:  # a crashing checker must not let code through
        return f"safety check failed: {type(exc).__name__}: {exc}"


def screen_name(lang: str) -> str:
    """Which checker is in force, for the run record."""
    from veriscale.backends.language import plugin_for

    return plugin_for(lang).screen_name
