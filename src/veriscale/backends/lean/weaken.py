"""Flawed Lean specifications from the ground truth: drop conjuncts, weaken equalities.

This is the paper's fallback ("systematically drop constraints from the
ground-truth specification to expose an attack target") made deterministic.
Splitting respects Lean's grammar (:mod:`veriscale.backends.lean.conjuncts`):
``∧`` is split only at bracket depth 0, before any binder whose scope would
swallow it, and never when a looser operator sits at depth 0 — except that
conjuncts in the consequent of a top-level implication or under a leading
``∀``/``∃`` are dropped inside it, which still weakens the formula.
"""

from __future__ import annotations

import re

from veriscale.backends.language import Weakening
from veriscale.backends.lean.conjuncts import (
    AND,
    BINDERS,
    CLOSE,
    OPEN,
    depth0_marks,
    outer_parens,
    split_conjuncts,
    split_lets,
)
from veriscale.values import ArrayT, ListT, OptionT, Scalar, ValueType


def _paren(e: str) -> str:
    e = e.strip()
    if outer_parens(e) is not None or re.fullmatch(r"[\w.'!?]+", e):
        return e
    return f"({e})"


def _join_and(parts: list[str]) -> str:
    if not parts:
        return "True"
    if len(parts) == 1:
        return parts[0]
    return " ∧ ".join(_paren(p) for p in parts)


def _binder_prefix(expr: str) -> tuple[str, str] | None:
    """``("∀ x ∈ xs,", rest)`` for an expression that starts with ``∀``/``∃`` binders."""
    e = expr.strip()
    m = re.match(r"^(∀|∃|forall|exists)(?![\w])", e)
    if not m:
        return None
    depth = 0
    for i in range(m.end(), len(e)):
        c = e[i]
        if c in OPEN:
            depth += 1
        elif c in CLOSE:
            depth -= 1
        elif c == "," and depth == 0:
            return e[: i + 1], e[i + 1 :].strip()
    return None


def _implication(expr: str) -> tuple[str, str] | None:
    """``(antecedent, consequent)`` split at the first depth-0 ``→`` before any binder."""
    marks = depth0_marks(expr)
    for i, t in marks:
        if t in BINDERS:
            return None
        if t in ("↔", "<->", "∨", "\\/", "||", "<|", "|>", "$"):
            return None
        if t in ("→", "->"):
            return expr[:i].strip(), expr[i + len(t) :].strip()
    return None


def _variants(expr: str, depth: int = 0) -> list[Weakening]:
    """Weaker forms of ``expr`` obtained by dropping one conjunct somewhere monotone."""
    if depth > 3:
        return []
    parts = split_conjuncts(expr)
    if len(parts) > 1:
        return [
            Weakening(f"drop:{k + 1}", _join_and(parts[:k] + parts[k + 1 :]))
            for k in range(len(parts))
        ]
    inner = outer_parens(expr)
    if inner is not None:
        return _variants(inner, depth + 1)
    binder = _binder_prefix(expr)
    if binder is not None:
        head, rest = binder
        return [Weakening(f"under-binder/{w.label}", f"{head} {w.body}")
                for w in _variants(rest, depth + 1)]
    imp = _implication(expr)
    if imp is not None:
        ante, cons = imp
        return [Weakening(f"consequent/{w.label}", f"{ante} → {_paren(w.body)}")
                for w in _variants(cons, depth + 1)]
    return []


def _lean_eq_weakenings(conj: str, ret: ValueType) -> list[tuple[str, str]]:
    """Weaker relations for a conjunct ``result = E`` (or ``E = result``)."""
    marks = [(i, t) for i, t in depth0_marks(conj) if t not in AND]
    if len(marks) != 1 or marks[0][1] not in ("=", "=="):
        return []
    i, t = marks[0]
    left, right = conj[:i].strip(), conj[i + len(t) :].strip()
    if left == "result":
        other = right
    elif right == "result":
        other = left
    else:
        return []
    o = _paren(other)
    if isinstance(ret, Scalar) and ret.name in ("Nat", "Int"):
        return [("le", f"result ≤ {o}"), ("ge", f"result ≥ {o}")]
    if isinstance(ret, ListT) or (isinstance(ret, Scalar) and ret.name == "String"):
        return [("length", f"result.length = {o}.length")]
    if isinstance(ret, ArrayT):
        return [("size", f"result.size = {o}.size")]
    if isinstance(ret, OptionT):
        return [("isSome", f"result.isSome = {o}.isSome")]
    return []


def lean_weakenings(body: str, ret: ValueType) -> list[Weakening]:
    """Every weaker postcondition body derived from the GT body (``let`` lines kept)."""
    lets, expr = split_lets(body)
    if not expr.strip():
        return []
    out = list(_variants(expr))
    parts = split_conjuncts(expr)
    for k, conj in enumerate(parts):
        for how, weaker in _lean_eq_weakenings(conj, ret):
            out.append(Weakening(f"weaken:{k + 1}:{how}",
                                 _join_and([*parts[:k], weaker, *parts[k + 1:]])))
    out.append(Weakening("drop-all", "True"))
    seen: set[str] = set()
    result = []
    for w in out:
        full = f"{lets}\n{w.body}" if lets and w.body != "True" else w.body
        if full.strip() and full not in seen and full.strip() != expr.strip():
            seen.add(full)
            result.append(Weakening(w.label, full))
    return result
