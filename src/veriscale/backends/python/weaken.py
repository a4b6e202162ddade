"""Flawed Python specifications from the ground truth: each droppable check or ``and``
operand of ``postcondition`` removed, equalities on ``result`` relaxed, early exits
accepted, everything dropped (the Python counterpart of
:mod:`veriscale.backends.lean.weaken`)."""

from __future__ import annotations

import ast
import copy
import textwrap

from veriscale.backends.language import Weakening
from veriscale.backends.python.conjuncts import conjuncts
from veriscale.values import ArrayT, ListT, OptionT, Scalar, ValueType


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


def _py_eq_weakenings(node: ast.expr, ret: ValueType) -> list[tuple[str, ast.expr]]:
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


def python_weakenings(source: str, ret: ValueType, name: str = "postcondition") -> list[Weakening]:
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
