"""Built-in flawed candidates, to measure a suite's discriminative power.

A strong suite rejects (scores not PASS) every flawed candidate and accepts the
ground truth. We derive flawed candidates from the ground truth itself:

* code mutants of the reference implementation — Python: AST-level (arithmetic
  operator swaps, comparison flips ``<``↔``<=``, integer constants and slice
  bounds ±1, negated conditions, ``and``↔``or``, ``all``↔``any``/``min``↔``max``,
  a dropped statement in a branch, perturbed return values); Lean:
  textual on the code body (``<``↔``≤``, ``+``↔``-``, ``0``↔``1``, ``&&``↔``||``,
  ``true``↔``false``, an ``if`` condition forced to ``true``/``false``, which
  drops a branch). Comments and literals are never touched.
* specification mutants of the GT pre/postcondition — dropped top-level
  conjuncts (and, in Python, dropped guard statements), weakened comparisons
  (``<``→``<=``, Python ``all``→``any``), flipped bounds (``<``↔``>``), and ``True``.

Generation is deterministic: sites are enumerated in source order and, above
``max_per_kind`` mutants, a subset is drawn with ``random.Random`` seeded from
the seed and the task id. Mutants identical to the ground truth (after
normalisation) or to each other are dropped; syntactically broken Python
mutants are dropped here and the harness drops any mutant the backend refuses
to compile, so a broken mutant is never counted as "detected".

Caveat: a mutant can be *equivalent* (behave like the ground truth on every
input). Such a mutant is reported as "not detected", so the detection rate is a
lower bound on a suite's true power.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from veriscale.backends.base import Implementation, Spec
from veriscale.backends.lean.conjuncts import split_conjuncts, split_lets
from veriscale.backends.lean.render import code_definition
from veriscale.backends.python.conjuncts import conjuncts
from veriscale.benchmark.model import Task
from veriscale.evaluation.solutions import Submission
from veriscale.values import ArrayT, LeanType, ListT, OptionT, ProdT, Scalar

DEFAULT_MAX_PER_KIND = 20
KINDS = ("code", "precond", "postcond")


@dataclass(frozen=True)
class FlawedCandidate:
    """One flawed candidate: which part of the GT it alters, and how."""

    task_id: str
    kind: str  # "code" | "precond" | "postcond"
    operator: str
    index: int
    candidate: Submission

    @property
    def id(self) -> str:
        return f"{self.task_id}:{self.kind}:{self.index}:{self.operator}"

    @property
    def metric(self) -> str:
        """The metric that must not be PASS for the mutant to count as detected."""
        return {"code": "code", "precond": "precond_sound_complete",
                "postcond": "postcond_sound_complete"}[self.kind]


# --------------------------------------------------------------------------- GT candidates


def gt_candidate(task: Task, sample: int = 0) -> Submission:
    """The ground truth as a candidate (code and both spec halves): the control."""
    from veriscale.backends.language import plugin_for

    code, (pre, post, pre_aux, post_aux) = plugin_for(task).ground_truth(task)
    impl = Implementation(code, id=f"{task.id}:gt", origin="ground_truth")
    spec = Spec(pre, post, pre_aux, post_aux, id=f"{task.id}:gt", origin="ground_truth")
    return Submission(task.id, sample, impl, spec)


# --------------------------------------------------------------------------- sampling


def _pick(items: list[tuple[str, str]], limit: int, seed: int, key: str,
          original: str, normalise: Callable[[str], str]) -> list[tuple[str, str]]:
    """Distinct mutants (operator, text) that differ from the original; at most ``limit``."""
    seen = {normalise(original)}
    uniq: list[tuple[str, str]] = []
    for op, text in items:
        norm = normalise(text)
        if norm in seen:
            continue
        seen.add(norm)
        uniq.append((op, text))
    if len(uniq) <= limit:
        return uniq
    rng = random.Random(f"{seed}:{key}")
    keep = sorted(rng.sample(range(len(uniq)), limit))
    return [uniq[i] for i in keep]


# --------------------------------------------------------------------------- Python AST


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


def _perturb_return(t: LeanType) -> Callable[[ast.AST], bool] | None:
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


def _code_edits(fn: ast.FunctionDef, return_type: LeanType) -> Iterator[Edit]:
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
    assert task.python is not None
    src = task.python.reference
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
    return _pick(items, limit, seed, f"{task.id}:code", src, _py_normalise)


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
    assert task.python is not None
    name = "precondition" if kind == "precond" else "postcondition"
    src = getattr(task.python, name)
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
    return _pick(items, limit, seed, f"{task.id}:{kind}", src, _py_normalise)


# --------------------------------------------------------------------------- Lean text

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
    """(operator, full ``def``) for textual mutants of the Lean code body."""
    assert task.lean is not None
    body = task.lean.code
    items = _lean_rule_mutants(body, _LEAN_CODE_RULES) + _lean_if_mutants(body)
    picked = _pick(items, limit, seed, f"{task.id}:code", body, _lean_normalise)
    return [(op, code_definition(task, text, task.lean.code_aux)) for op, text in picked]


def lean_spec_mutants(task: Task, kind: str, limit: int = DEFAULT_MAX_PER_KIND,
                      seed: int = 0) -> list[tuple[str, str]]:
    """(operator, body) for mutants of the Lean precondition or postcondition body."""
    assert task.lean is not None
    body = task.lean.precond if kind == "precond" else task.lean.postcond
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
    return _pick(items, limit, seed, f"{task.id}:{kind}", body, _lean_normalise)


# --------------------------------------------------------------------------- all mutants


def task_mutants(task: Task, max_per_kind: int = DEFAULT_MAX_PER_KIND,
                 seed: int = 0) -> list[FlawedCandidate]:
    """Every built-in flawed candidate of one task (code, precondition, postcondition)."""
    out: list[FlawedCandidate] = []
    gt = gt_candidate(task)
    assert gt.spec is not None
    from veriscale.backends.language import plugin_for

    plugin = plugin_for(task)
    code = plugin.code_mutants(task, max_per_kind, seed)
    pre = plugin.spec_mutants(task, "precond", max_per_kind, seed)
    post = plugin.spec_mutants(task, "postcond", max_per_kind, seed)
    for i, (op, text) in enumerate(code):
        impl = Implementation(text, id=f"{task.id}:code:{i}", strategy=op, origin="mutant")
        out.append(FlawedCandidate(task.id, "code", op, i, Submission(task.id, i, impl=impl)))
    for i, (op, text) in enumerate(pre):
        spec = Spec(precond=text, postcond=None, precond_aux=gt.spec.precond_aux,
                    id=f"{task.id}:precond:{i}", origin="mutant")
        out.append(FlawedCandidate(task.id, "precond", op, i, Submission(task.id, i, spec=spec)))
    for i, (op, text) in enumerate(post):
        spec = Spec(precond=None, postcond=text, postcond_aux=gt.spec.postcond_aux,
                    id=f"{task.id}:postcond:{i}", origin="mutant")
        out.append(FlawedCandidate(task.id, "postcond", op, i, Submission(task.id, i, spec=spec)))
    return out
