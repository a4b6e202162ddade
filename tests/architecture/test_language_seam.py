"""The language seam (issue 12 §1): outside ``backends/<language>/`` no code branches
on a specification language or defines a ``lean_*`` / ``python_*`` / ``coq_*`` helper;
stages ask the language plug-in (:mod:`veriscale.backends.language`) instead.

The allow-list is explicit and small; each entry says why it may stay.
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "veriscale"
LANGUAGES = ("lean", "python", "coq")
_L = "|".join(LANGUAGES)

RULES = {
    "language helper": re.compile(rf"^\s*def (?:{_L}|py)_\w+", re.M),
    "comparison with a language name": re.compile(
        rf"""[=!]=\s*["'](?:{_L}|verina)["']|["'](?:{_L}|verina)["']\s*[=!]="""),
    "test of a task's language sections": re.compile(
        rf"\b(?:task|t|self)\.(?:{_L})\s+(?:is\b|else\b)|\bif\s+(?:task|t)\.(?:{_L})\b"
        rf"""|\.section\(\s*["'](?:{_L})["']|sections\[\s*["'](?:{_L})["']"""),
    "a task model field for one language": re.compile(
        rf"^\s+(?:{_L}):\s*\w*Sections\b", re.M),
}

ALLOWED: dict[tuple[str, str], str] = {}


def _outside_language_folders() -> list[Path]:
    skip = {SRC / "backends" / lang for lang in LANGUAGES}
    return [p for p in sorted(SRC.rglob("*.py")) if not any(s in p.parents for s in skip)]


def findings() -> list[tuple[str, str, int, str]]:
    out = []
    for path in _outside_language_folders():
        rel = path.relative_to(SRC).as_posix()
        text = path.read_text(encoding="utf-8")
        for rule, pattern in RULES.items():
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                out.append((rel, rule, line, m.group(0).strip()))
    return out


def test_no_language_branch_outside_the_language_folders() -> None:
    bad = [f"{rel}:{line}: {rule}: {what}" for rel, rule, line, what in findings()
           if (rel, rule) not in ALLOWED]
    assert not bad, "language knowledge outside backends/<language>/:\n" + "\n".join(bad)


def test_the_rules_see_what_they_forbid() -> None:
    """The patterns catch the shapes they are meant to (so the test above can fail)."""
    samples = {
        "language helper": "def lean_text(task):\n    pass\n",
        "comparison with a language name": 'if backend == "python":\n',
        "test of a task's language sections": "if task.lean is not None:\n",
        "a task model field for one language": "    lean: LeanSections | None = None\n",
    }
    for rule, text in samples.items():
        assert RULES[rule].search(text), rule
    assert not RULES["comparison with a language name"].search('plugin_for(task).backend\n')
    assert RULES["test of a task's language sections"].search('task.section("coq")')


def test_allow_list_has_no_stale_entries() -> None:
    """Every allowed (file, rule) still occurs: entries go when the code moves."""
    seen = {(rel, rule) for rel, rule, _, _ in findings()}
    stale = sorted(k for k in ALLOWED if k not in seen)
    assert not stale, f"remove these allow-list entries: {stale}"


def test_every_language_has_a_plugin() -> None:
    from veriscale.backends.language import languages, plugin_for

    assert set(languages()) == set(LANGUAGES)
    for lang in LANGUAGES:
        assert plugin_for(lang).name == lang
