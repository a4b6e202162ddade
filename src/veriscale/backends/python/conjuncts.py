"""Top-level conjuncts of a Python condition: the one splitter that the offline
weakenings (``backends/python/weaken.py``) and the spec mutants (``backends/python/mutants.py``) share.
Python's grammar gives it for free (an ``and`` ``BoolOp``), so it works on the AST."""

from __future__ import annotations

import ast


def conjuncts(expr: ast.expr) -> list[ast.expr]:
    """The operands of a top-level ``and`` (``[expr]`` when it is not one)."""
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And):
        return list(expr.values)
    return [expr]


def split_conjuncts(source: str) -> list[str]:
    """Top-level conjuncts of a Python expression, or of the final ``return`` of a
    function's source; one item when it is not a conjunction."""
    text = source.strip()
    try:
        expr: ast.expr | None = ast.parse(text, mode="eval").body
    except SyntaxError:
        import textwrap

        try:
            module = ast.parse(textwrap.dedent(source))
        except SyntaxError:
            return [text]
        fn = next((n for n in module.body if isinstance(n, ast.FunctionDef)), None)
        last = fn.body[-1] if fn is not None and fn.body else None
        expr = last.value if isinstance(last, ast.Return) else None
        if expr is None:
            return [text]
    return [ast.unparse(c) for c in conjuncts(expr)]
