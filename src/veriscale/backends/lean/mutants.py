"""Code and spec mutants of Lean tasks, for discriminative power: textual edits of the
code body (``<``/``≤``, ``+``/``-``, ``0``/``1``, ``&&``/``||``, ``true``/``false``, an
``if`` condition forced, which drops a branch) and of the GT conditions (dropped
top-level conjuncts, weakened or flipped comparisons, ``True``). Comments and literals
are never touched (see :mod:`veriscale.evaluation.mutants`)."""

from __future__ import annotations

import re

from veriscale.backends.lean.conjuncts import split_conjuncts, split_lets
from veriscale.backends.lean.sections import lean_sections
from veriscale.backends.sampling import DEFAULT_MAX_PER_KIND, pick_distinct
from veriscale.benchmark.model import Task

_PROTECTED = re.compile(r'--[^\n]*|/-.*?-/|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'', re.S)

# (operator, pattern, replacement). Patterns avoid arrows, comments and `++`/`<;>`-style tokens.
_LEAN_CODE_RULES: list[tuple[str, str, str]] = [
    ("lt->le", r"(?<![<\-=|$*<])<(?![-=|$>;<*])", "≤"),
    ("le->lt", r"≤", "<"),
    ("gt->ge", r"(?<![\-=|>])>(?![=>])", "≥"),
    ("ge->gt", r"≥", ">"),
    ("plus->minus", r"(?<=\s)\+(?=\s)", "-"),
    ("minus->plus", r"(?<=\s)-(?=\s)", "+"),
    ("0->1", r"(?<![\w.'])0(?![\w.])", "1"),
    ("1->0", r"(?<![\w.'])1(?![\w.])", "0"),
    ("and->or", r"&&", "||"),
    ("or->and", r"\|\|", "&&"),
    ("true->false", r"\btrue\b", "false"),
    ("false->true", r"\bfalse\b", "true"),
]
_LEAN_SPEC_RULES: list[tuple[str, str, str]] = [
    ("weaken:lt->le", r"(?<![<\-=|$*<])<(?![-=|$>;<*])", "≤"),
    ("weaken:gt->ge", r"(?<![\-=|>])>(?![=>])", "≥"),
    ("flip:lt->gt", r"(?<![<\-=|$*<])<(?![-=|$>;<*])", ">"),
    ("flip:gt->lt", r"(?<![\-=|>])>(?![=>])", "<"),
    ("flip:le->ge", r"≤", "≥"),
    ("flip:ge->le", r"≥", "≤"),
]
_LEAN_IF = re.compile(r"\bif\s+(?!h\w*\s*:)([^\n]+?)\s+then\b")


def _protected_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _PROTECTED.finditer(text)]


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def _lean_rule_mutants(text: str, rules: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    spans = _protected_spans(text)
    out: list[tuple[str, str]] = []
    for op, pattern, repl in rules:
        for m in re.finditer(pattern, text):
            if _inside(m.start(), spans):
                continue
            out.append((op, text[: m.start()] + repl + text[m.end():]))
    return out


def _lean_if_mutants(text: str) -> list[tuple[str, str]]:
    spans = _protected_spans(text)
    out = []
    for m in _LEAN_IF.finditer(text):
        if _inside(m.start(), spans):
            continue
        a, b = m.span(1)
        out.append(("if->true (drop else)", text[:a] + "true" + text[b:]))
        out.append(("if->false (drop then)", text[:a] + "false" + text[b:]))
    return out


def _lean_normalise(text: str) -> str:
    return " ".join(_PROTECTED.sub(" ", text).split())


def lean_code_mutants(task: Task, limit: int = DEFAULT_MAX_PER_KIND,
                      seed: int = 0) -> list[tuple[str, str]]:
    """(operator, body) for textual mutants of the Lean code body (the plug-in makes
    each a full ``def``)."""
    lean = lean_sections(task)
    assert lean is not None
    body = lean.code
    items = _lean_rule_mutants(body, _LEAN_CODE_RULES) + _lean_if_mutants(body)
    return pick_distinct(items, limit, seed, f"{task.id}:code", body, _lean_normalise)


def lean_spec_mutants(task: Task, kind: str, limit: int = DEFAULT_MAX_PER_KIND,
                      seed: int = 0) -> list[tuple[str, str]]:
    """(operator, body) for mutants of the Lean precondition or postcondition body."""
    lean = lean_sections(task)
    assert lean is not None
    body = lean.precond if kind == "precond" else lean.postcond
    items: list[tuple[str, str]] = []
    lets, expr = split_lets(body)
    prefix = "".join(f"  {line}\n" for line in lets.splitlines())
    conj = split_conjuncts(expr if lets else body)  # under the bindings they use
    if len(conj) > 1:
        for i in range(len(conj)):
            rest = conj[:i] + conj[i + 1:]
            items.append(("drop-conjunct",
                          prefix + "  " + " ∧\n  ".join(f"({c})" for c in rest)))
    items += _lean_rule_mutants(body, _LEAN_SPEC_RULES)
    items.append(("true", "  True"))
    return pick_distinct(items, limit, seed, f"{task.id}:{kind}", body, _lean_normalise)
