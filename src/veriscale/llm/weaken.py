"""Flawed specifications from the ground truth: drop conjuncts, weaken equalities.

This is the paper's fallback ("systematically drop constraints from the
ground-truth specification to expose an attack target") made deterministic.
Splitting respects Lean's grammar: ``∧`` is split only at bracket depth 0,
before any binder (``∀ ∃ fun let if match``) whose scope would swallow it, and
never when a looser operator (``→ ↔ ∨ |>``) sits at depth 0 — except that
conjuncts in the consequent of a top-level implication or under a leading
``∀``/``∃`` are dropped inside it, which still weakens the formula.
"""

from __future__ import annotations

import ast
import copy
import re
import textwrap
from dataclasses import dataclass

from veriscale.backends.lean.conjuncts import (
    AND,
    BINDERS,
    CLOSE,
    OPEN,
    depth0_marks,
    outer_parens,
    split_conjuncts,
)
from veriscale.backends.python.conjuncts import conjuncts
from veriscale.llm.parsers import strip_lean_comments
from veriscale.values import ArrayT, LeanType, ListT, OptionT, Scalar


@dataclass(frozen=True)
class Weakening:
    """One weaker postcondition: ``label`` says how (``drop:2``, ``weaken:1:le``...)."""

    label: str
    body: str


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


def _split_lets(body: str) -> tuple[str, str]:
    """(leading ``let``/``have`` lines, the final expression) of a dedented body."""
    lines = textwrap.dedent(strip_lean_comments(body)).strip("\n").splitlines()
    lines = [ln.rstrip() for ln in lines if ln.strip()]
    k = 0
    while k < len(lines) and re.match(r"^(let|have)\b", lines[k]):
        k += 1
        while k < len(lines) and lines[k][:1].isspace():
            k += 1
    return "\n".join(lines[:k]), "\n".join(lines[k:])


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


def _lean_eq_weakenings(conj: str, ret: LeanType) -> list[tuple[str, str]]:
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


def lean_weakenings(body: str, ret: LeanType) -> list[Weakening]:
    """Every weaker postcondition body derived from the GT body (``let`` lines kept)."""
    lets, expr = _split_lets(body)
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


# ---------------------------------------------------------------------- Python


def _only_false_returns(stmt: ast.stmt) -> bool:
    returns = [n for n in ast.walk(stmt) if isinstance(n, ast.Return)]
    if not returns and not isinstance(stmt, ast.Assert):
        return False
    return all(
        isinstance(r.value, ast.Constant) and r.value.value is False for r in returns
    )


_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda,
           ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _stored(stmt: ast.stmt) -> set[str]:
    """Names a statement binds in the function's scope (comprehension targets excluded)."""
    out: set[str] = set()
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                stack.append(child)
    return out


def _loaded(stmts: list[ast.stmt]) -> set[str]:
    return {
        n.id for s in stmts for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def _py_eq_weakenings(node: ast.expr, ret: LeanType) -> list[tuple[str, ast.expr]]:
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq)):
        return []
    left, right = node.left, node.comparators[0]
    if isinstance(left, ast.Name) and left.id == "result":
        other = right
    elif isinstance(right, ast.Name) and right.id == "result":
        other = left
    else:
        return []
    o = ast.unparse(other)
    texts: list[tuple[str, str]] = []
    if isinstance(ret, Scalar) and ret.name in ("Nat", "Int"):
        texts = [("le", f"result <= ({o})"), ("ge", f"result >= ({o})")]
    elif isinstance(ret, (ListT, ArrayT)) or (isinstance(ret, Scalar) and ret.name == "String"):
        texts = [("length", f"len(result) == len({o})")]
    elif isinstance(ret, OptionT):
        texts = [("isSome", f"(result is None) == (({o}) is None)")]
    return [(how, ast.parse(t, mode="eval").body) for how, t in texts]


def python_weakenings(source: str, ret: LeanType, name: str = "postcondition") -> list[Weakening]:
    """Weaker ``postcondition`` functions: each droppable check or ``and`` operand removed,
    equalities on ``result`` relaxed, and everything dropped (``return True``)."""
    try:
        module = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return []
    fn = next((n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if fn is None or not fn.body:
        return []
    body = fn.body
    out: list[Weakening] = []

    def render(stmts: list[ast.stmt]) -> str:
        new = copy.copy(fn)
        new.body = stmts or [ast.Return(ast.Constant(True))]
        new.decorator_list = []
        return ast.unparse(ast.fix_missing_locations(new))

    checks = [
        k for k, s in enumerate(body[:-1])
        if isinstance(s, (ast.If, ast.For, ast.While, ast.Assert))
        and _only_false_returns(s) and not (_stored(s) & _loaded(body[k + 1 :]))
    ]
    # ``if c: return <expr>`` early exits: accepting everything in that branch weakens too.
    branches = [
        k for k, s in enumerate(body[:-1])
        if isinstance(s, ast.If) and not s.orelse and len(s.body) == 1
        and isinstance(s.body[0], ast.Return) and s.body[0].value is not None
        and not isinstance(s.body[0].value, ast.Constant)
    ]
    for n, k in enumerate(checks, start=1):
        out.append(Weakening(f"drop-check:{n}", render(body[:k] + body[k + 1 :])))
    last = body[-1]
    if isinstance(last, ast.Return) and last.value is not None:
        value = last.value
        operands = conjuncts(value)
        if len(operands) > 1:
            for k in range(len(operands)):
                rest = operands[:k] + operands[k + 1 :]
                expr = rest[0] if len(rest) == 1 else ast.BoolOp(ast.And(), rest)
                out.append(Weakening(f"drop:{k + 1}", render([*body[:-1], ast.Return(expr)])))
        for k, op in enumerate(operands):
            for how, weaker in _py_eq_weakenings(op, ret):
                ops = [*operands[:k], weaker, *operands[k + 1:]]
                expr = ops[0] if len(ops) == 1 else ast.BoolOp(ast.And(), ops)
                out.append(
                    Weakening(f"weaken:{k + 1}:{how}", render([*body[:-1], ast.Return(expr)]))
                )
    for n, k in enumerate(branches, start=1):
        relaxed = copy.copy(body[k])
        relaxed.body = [ast.Return(ast.Constant(True))]
        out.append(Weakening(f"relax-branch:{n}", render([*body[:k], relaxed, *body[k + 1 :]])))
    out.append(Weakening("drop-all", render([ast.Return(ast.Constant(True))])))
    original = ast.unparse(fn)
    seen: set[str] = set()
    result = []
    for w in out:
        if w.body not in seen and w.body != original:
            seen.add(w.body)
            result.append(w)
    return result
