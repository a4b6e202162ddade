"""Code and spec mutants of Python-spec tasks, for discriminative power: AST-level
edits of the reference (arithmetic swaps, comparison flips, constants and slice bounds
±1, negated conditions, ``and``/``or``, ``all``/``any``, ``min``/``max``, a dropped
statement, a perturbed return value) and of the GT conditions (dropped conjuncts and
guards, weakened or flipped comparisons, ``all`` -> ``any``, ``True``). Syntactically
broken mutants are dropped here (see :mod:`veriscale.evaluation.mutants`)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from veriscale.backends.python.conjuncts import conjuncts
from veriscale.backends.python.sections import python_sections
from veriscale.backends.sampling import DEFAULT_MAX_PER_KIND, pick_distinct
from veriscale.benchmark.model import Task
from veriscale.values import ArrayT, ListT, OptionT, ProdT, Scalar, ValueType

_ARITH_SWAPS: dict[type, list[type]] = {
    ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.Add, ast.FloorDiv],
    ast.FloorDiv: [ast.Mult, ast.Mod], ast.Mod: [ast.FloorDiv], ast.Div: [ast.Mult],
}
_CMP_FLIPS: dict[type, list[type]] = {
    ast.Lt: [ast.LtE], ast.LtE: [ast.Lt], ast.Gt: [ast.GtE], ast.GtE: [ast.Gt],
    ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq],
}
_CMP_WEAKEN: dict[type, list[type]] = {ast.Lt: [ast.LtE], ast.Gt: [ast.GtE], ast.Eq: [ast.LtE]}
_CMP_BOUND_FLIP: dict[type, list[type]] = {
    ast.Lt: [ast.Gt], ast.Gt: [ast.Lt], ast.LtE: [ast.GtE], ast.GtE: [ast.LtE],
}

Edit = tuple[str, int, Callable[[ast.AST], bool]]
"""(operator name, index of the node in ast.walk order, in-place edit; False = not applicable)."""


def _function(tree: ast.Module, names: tuple[str, ...]) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            return node
    return None


def _set_op(new: type) -> Callable[[ast.AST], bool]:
    def edit(node: ast.AST) -> bool:
        node.op = new()  # type: ignore[attr-defined]
        return True
    return edit


def _set_cmp(i: int, new: type) -> Callable[[ast.AST], bool]:
    def edit(node: ast.AST) -> bool:
        node.ops[i] = new()  # type: ignore[attr-defined]
        return True
    return edit


def _add_const(delta: int) -> Callable[[ast.AST], bool]:
    def edit(node: ast.AST) -> bool:
        node.value += delta  # type: ignore[attr-defined]
        return True
    return edit


def _negate_test(node: ast.AST) -> bool:
    node.test = ast.UnaryOp(ast.Not(), node.test)  # type: ignore[attr-defined]
    return True


def _drop_stmt(field: str, i: int) -> Callable[[ast.AST], bool]:
    def edit(node: ast.AST) -> bool:
        block = getattr(node, field)
        del block[i]
        if not block:
            block.append(ast.Pass())
        return True
    return edit


_CALL_SWAPS = {"all": "any", "any": "all", "min": "max", "max": "min"}


def _swap_boolop(node: ast.AST) -> bool:
    node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()  # type: ignore[attr-defined]
    return True


def _swap_call(node: ast.AST) -> bool:
    node.func.id = _CALL_SWAPS[node.func.id]  # type: ignore[attr-defined]
    return True


def _shift_slice(fld: str, delta: int) -> Callable[[ast.AST], bool]:
    def edit(node: ast.AST) -> bool:
        op = ast.Add() if delta > 0 else ast.Sub()
        setattr(node, fld, ast.BinOp(getattr(node, fld), op, ast.Constant(abs(delta))))
        return True
    return edit


def _perturb_return(t: ValueType) -> Callable[[ast.AST], bool] | None:
    """A type-directed near miss of the returned value."""
    def wrap(make: Callable[[ast.expr], ast.expr]) -> Callable[[ast.AST], bool]:
        def edit(node: ast.AST) -> bool:
            if node.value is None:  # type: ignore[attr-defined]
                return False
            node.value = make(node.value)  # type: ignore[attr-defined]
            return True
        return edit

    if isinstance(t, Scalar) and t.name in ("Nat", "Int", "UInt8"):
        return wrap(lambda v: ast.BinOp(v, ast.Add(), ast.Constant(1)))
    if isinstance(t, Scalar) and t.name == "Float":
        return wrap(lambda v: ast.BinOp(v, ast.Add(), ast.Constant(1.0)))
    if isinstance(t, Scalar) and t.name == "Bool":
        return wrap(lambda v: ast.UnaryOp(ast.Not(), v))
    if isinstance(t, Scalar) and t.name == "String":
        return wrap(lambda v: ast.BinOp(v, ast.Add(), ast.Constant("a")))
    if isinstance(t, (ListT, ArrayT)):
        # drop the last element
        return wrap(lambda v: ast.Subscript(ast.Call(ast.Name("list", ast.Load()), [v], []),
                                            ast.Slice(None, ast.UnaryOp(ast.USub(),
                                                                        ast.Constant(1))),
                                            ast.Load()))
    if isinstance(t, OptionT):
        return wrap(lambda v: ast.Constant(None))
    if isinstance(t, ProdT):  # swap the pair
        return wrap(lambda v: ast.Call(ast.Name("tuple", ast.Load()), [ast.Call(
            ast.Name("reversed", ast.Load()), [ast.Call(ast.Name("list", ast.Load()), [v], [])],
            [])], []))
    return None


def _code_edits(fn: ast.FunctionDef, return_type: ValueType) -> Iterator[Edit]:
    perturb = _perturb_return(return_type)
    for idx, node in enumerate(ast.walk(fn)):
        if isinstance(node, (ast.BinOp, ast.AugAssign)):
            for new in _ARITH_SWAPS.get(type(node.op), []):
                yield (f"arith:{type(node.op).__name__}->{new.__name__}", idx, _set_op(new))
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                for new in _CMP_FLIPS.get(type(op), []):
                    yield (f"cmp:{type(op).__name__}->{new.__name__}", idx, _set_cmp(i, new))
        elif (isinstance(node, ast.Constant) and type(node.value) is int):
            yield ("const+1", idx, _add_const(1))
            yield ("const-1", idx, _add_const(-1))
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            yield ("negate-cond", idx, _negate_test)
        if isinstance(node, ast.If):
            for fld in ("body", "orelse"):
                for i in range(len(getattr(node, fld))):
                    yield (f"drop-stmt:{fld}", idx, _drop_stmt(fld, i))
        if isinstance(node, ast.Return) and perturb is not None:
            yield ("return-perturb", idx, perturb)
        if isinstance(node, ast.BoolOp):
            yield ("and<->or", idx, _swap_boolop)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("all", "any", "min", "max"):
            yield (f"call:{node.func.id}->{_CALL_SWAPS[node.func.id]}", idx, _swap_call)
        if isinstance(node, ast.Slice):
            for fld in ("lower", "upper"):
                if getattr(node, fld) is not None:
                    yield (f"slice-{fld}+1", idx, _shift_slice(fld, 1))
                    yield (f"slice-{fld}-1", idx, _shift_slice(fld, -1))


def _apply(src: str, names: tuple[str, ...], idx: int,
           edit: Callable[[ast.AST], bool]) -> str | None:
    """Re-parse, edit the ``idx``-th node of the function, unparse; None when inapplicable."""
    tree = ast.parse(src)
    fn = _function(tree, names)
    if fn is None:
        return None
    node = next(n for i, n in enumerate(ast.walk(fn)) if i == idx)
    if not edit(node):
        return None
    ast.fix_missing_locations(tree)
    try:
        text = ast.unparse(tree)
        compile(text, "<mutant>", "exec")
    except (SyntaxError, ValueError, TypeError):
        return None
    return text


def _py_normalise(src: str) -> str:
    try:
        return ast.unparse(ast.parse(src))
    except SyntaxError:
        return src


def python_code_mutants(task: Task, limit: int = DEFAULT_MAX_PER_KIND,
                        seed: int = 0) -> list[tuple[str, str]]:
    """(operator, source) for mutants of the ``reference`` section (aux is the backend's)."""
    py = python_sections(task)
    assert py is not None
    src = py.reference
    names = ("reference", task.signature.name)
    try:
        fn = _function(ast.parse(src), names)
    except SyntaxError:
        return []
    if fn is None:
        return []
    items = []
    for op, idx, edit in _code_edits(fn, task.signature.return_type):
        text = _apply(src, names, idx, edit)
        if text is not None:
            items.append((op, text))
    return pick_distinct(items, limit, seed, f"{task.id}:code", src, _py_normalise)


def _conjunct_drops(fn: ast.FunctionDef) -> Iterator[Edit]:
    """Drop one operand of a top-level ``and`` in a return, or one guard ``if`` statement."""
    for idx, node in enumerate(ast.walk(fn)):
        if isinstance(node, ast.Return) and node.value is not None \
                and len(conjuncts(node.value)) > 1:
            for i in range(len(conjuncts(node.value))):
                def edit(n: ast.AST, i: int = i) -> bool:
                    vals = n.value.values  # type: ignore[attr-defined]
                    rest = vals[:i] + vals[i + 1:]
                    n.value = rest[0] if len(rest) == 1 else ast.BoolOp(ast.And(), rest)  # type: ignore[attr-defined]
                    return True
                yield ("drop-conjunct", idx, edit)
    body = fn.body
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.If) and len(body) > 1 and any(
            isinstance(s, ast.Return) for s in stmt.body
        ):
            yield ("drop-guard", 0, _drop_stmt("body", i))


def _spec_edits(fn: ast.FunctionDef) -> Iterator[Edit]:
    yield from _conjunct_drops(fn)
    for idx, node in enumerate(ast.walk(fn)):
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                for new in _CMP_WEAKEN.get(type(op), []):
                    yield (f"weaken:{type(op).__name__}->{new.__name__}", idx, _set_cmp(i, new))
                for new in _CMP_BOUND_FLIP.get(type(op), []):
                    yield (f"flip:{type(op).__name__}->{new.__name__}", idx, _set_cmp(i, new))

    for idx, node in enumerate(ast.walk(fn)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "all":
            yield ("weaken:all->any", idx, _swap_call)

    def always_true(n: ast.AST) -> bool:
        n.body = [ast.Return(ast.Constant(True))]  # type: ignore[attr-defined]
        return True
    yield ("true", 0, always_true)


def python_spec_mutants(task: Task, kind: str, limit: int = DEFAULT_MAX_PER_KIND,
                        seed: int = 0) -> list[tuple[str, str]]:
    """(operator, function source) for mutants of the precondition or postcondition."""
    py = python_sections(task)
    assert py is not None
    name = "precondition" if kind == "precond" else "postcondition"
    src = getattr(py, name)
    try:
        fn = _function(ast.parse(src), (name,))
    except SyntaxError:
        return []
    if fn is None:
        return []
    items = []
    for op, idx, edit in _spec_edits(fn):
        text = _apply(src, (name,), idx, edit)
        if text is not None:
            items.append((op, text))
    return pick_distinct(items, limit, seed, f"{task.id}:{kind}", src, _py_normalise)
