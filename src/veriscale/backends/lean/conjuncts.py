"""Top-level conjuncts of a Lean proposition: the one splitter that the offline
weakenings (``backends/lean/weaken.py``) and the spec mutants (``backends/lean/mutants.py``) share.

Splitting respects Lean's grammar: ``∧`` is split only at bracket depth 0, before
any binder (``∀ ∃ fun let if match``) whose scope would swallow it, and never when a
looser operator (``→ ↔ ∨ |>``) sits at depth 0 (``a ∨ b ∧ c`` is one disjunction).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

from veriscale.backends.lean.lexer import strip_comments_or_keep

OPEN = "([{⟨"
CLOSE = ")]}⟩"
BINDERS = ("∀", "∃!", "∃", "fun", "λ", "forall", "exists", "let", "have", "if", "match",
           "show", "do", "Σ", "∑", "∏")  # fmt: skip
LOOSE = ("→", "->", "↔", "<->", "∨", "\\/", "||", "<|", "|>", "$", "∘")
AND = ("∧", "/\\")


def _is_word_at(text: str, i: int, word: str) -> bool:
    if not text.startswith(word, i):
        return False
    if word[0].isalpha():
        before = text[i - 1] if i else " "
        after = text[i + len(word)] if i + len(word) < len(text) else " "
        return not (before.isalnum() or before in "_.'") and not (after.isalnum() or after in "_'!?")
    return True


def depth0_marks(expr: str) -> list[tuple[int, str]]:
    """Depth-0 occurrences of ``∧``, looser operators, binders and ``=``, with positions."""
    marks: list[tuple[int, str]] = []
    depth = 0
    i = 0
    n = len(expr)
    while i < n:
        c = expr[i]
        if c == '"':
            j = i + 1
            while j < n and expr[j] != '"':
                j += 2 if expr[j] == "\\" else 1
            i = j + 1
            continue
        if c == "'" and i + 2 < n and expr[i + 2] == "'":
            i += 3
            continue
        if c in OPEN:
            depth += 1
        elif c in CLOSE:
            depth -= 1
        elif depth == 0:
            tok = next(
                (w for w in (*AND, *LOOSE, *BINDERS) if _is_word_at(expr, i, w)), None
            )
            if tok is not None:
                marks.append((i, tok))
                i += len(tok)
                continue
            if c == "=" and expr[i - 1 : i] not in (":", "<", ">", "!", "=", "≠") and expr[
                i + 1 : i + 2
            ] not in ("=", ">"):
                marks.append((i, "="))
            elif expr.startswith("==", i) and expr[i - 1 : i] not in ("=", "!", "<", ">"):
                marks.append((i, "=="))
                i += 2
                continue
        i += 1
    return marks


def outer_parens(expr: str) -> str | None:
    """The inside of ``( ... )`` when the parentheses enclose the whole expression."""
    e = expr.strip()
    if not (e.startswith("(") and e.endswith(")")):
        return None
    depth = 0
    for i, c in enumerate(e):
        if c in OPEN:
            depth += 1
        elif c in CLOSE:
            depth -= 1
            if depth == 0 and i != len(e) - 1:
                return None
    return e[1:-1].strip()


def split_conjuncts(expr: str) -> list[str]:
    """Top-level conjuncts of a Lean proposition (one item when it is not a conjunction);
    comments are dropped."""
    e = strip_comments_or_keep(expr).strip()
    inner = outer_parens(e)
    marks = depth0_marks(e)
    first_binder = next((i for i, t in marks if t in BINDERS), len(e))
    if any(t in LOOSE for i, t in marks if i < first_binder):
        return [e]
    cuts = [(i, t) for i, t in marks if t in AND and i < first_binder]
    if not cuts:
        if inner is not None:
            parts = split_conjuncts(inner)
            return parts if len(parts) > 1 else [e]
        return [e]
    parts = []
    start = 0
    for i, t in cuts:
        parts.append(e[start:i].strip())
        start = i + len(t)
    parts.append(e[start:].strip())
    return [p for p in parts if p]


def split_lets(body: str, strip: Callable[[str], str] = strip_comments_or_keep) -> tuple[str, str]:
    """(leading ``let``/``have`` lines, the final expression) of a dedented body, so
    that conjuncts can be dropped under the bindings they use; ``strip`` removes the
    comments first."""
    lines = textwrap.dedent(strip(body)).strip("\n").splitlines()
    lines = [ln.rstrip() for ln in lines if ln.strip()]
    k = 0
    while k < len(lines) and re.match(r"^(let|have)\b", lines[k]):
        k += 1
        while k < len(lines) and lines[k][:1].isspace():
            k += 1
    return "\n".join(lines[:k]), "\n".join(lines[k:])
