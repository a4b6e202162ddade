"""The toy language's evaluator: integer and boolean expressions, nothing else."""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from typing import Any

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
        ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
          ast.Name, ast.Constant, ast.Load, ast.USub, ast.Not, ast.And, ast.Or,
          *_BIN, *_CMP)


class ExprError(ValueError):
    """Not an expression of the language, or one that fails when evaluated."""


def parse(text: str) -> ast.Expression:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"syntax: {exc.msg}") from exc
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise ExprError(f"{type(node).__name__} is not part of the language")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, bool)):
            raise ExprError(f"constant {node.value!r} is not an integer or a boolean")
    return tree


def evaluate(text: str, env: Mapping[str, Any]) -> Any:
    def ev(n: ast.AST) -> Any:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            if n.id in ("True", "False"):
                return n.id == "True"
            if n.id not in env:
                raise ExprError(f"unknown name {n.id}")
            return env[n.id]
        if isinstance(n, ast.BinOp):
            left, right = ev(n.left), ev(n.right)
            if isinstance(n.op, (ast.FloorDiv, ast.Mod)) and right == 0:
                raise ExprError("division by zero")
            return _BIN[type(n.op)](left, right)
        if isinstance(n, ast.UnaryOp):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else not v
        if isinstance(n, ast.BoolOp):
            vals = [ev(v) for v in n.values]
            return all(vals) if isinstance(n.op, ast.And) else any(vals)
        if isinstance(n, ast.Compare):
            left = ev(n.left)
            for op, comp in zip(n.ops, n.comparators, strict=True):
                right = ev(comp)
                if not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(n, ast.IfExp):
            return ev(n.body) if ev(n.test) else ev(n.orelse)
        raise ExprError(f"{type(n).__name__} is not part of the language")

    return ev(parse(text))
