"""Python answers of a model: ``precondition`` / ``postcondition`` sources and
adversarial functions, parameters renamed where the model chose other names.

The language-neutral part (fences, reasoning, markers, helpers shared between
chunks, ids) is :mod:`veriscale.backends.answers`.
"""

from __future__ import annotations

import ast
import re
import textwrap

from veriscale.backends.answers import (
    AnswerSyntax,
    Helper,
    ParseError,
    Rejection,
    binder_mapping,
    main_name_re,
    rename_ident,
    spec_code,
    with_id,
)
from veriscale.backends.base import Spec
from veriscale.backends.python.prompting import COMMENT
from veriscale.benchmark.model import Signature


def defined_names(code: str) -> set[str]:
    """Top-level functions, classes and assigned names of ``code`` (a regex scan: the
    code may not parse)."""
    return set(re.findall(r"(?m)^(?:async\s+)?(?:def|class)\s+(\w+)", code)) | set(
        re.findall(r"(?m)^(\w+)\s*(?::[^=\n]*)?=(?!=)", code))


class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        if node.arg in self.mapping:
            node.arg = self.mapping[node.arg]
        return node


def _py_module(code: str) -> ast.Module:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        raise ParseError(f"not valid Python: {exc}") from None


def _py_function_source(code: str, fn: ast.FunctionDef, want: list[str], what: str) -> str:
    """The source of ``fn``, with its parameters renamed to ``want`` when they differ."""
    if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.posonlyargs:
        raise ParseError(f"{what} must take plain positional parameters {want}")
    got = [a.arg for a in fn.args.args]
    mapping = binder_mapping(got, want, what)
    if not mapping:
        return ast.get_source_segment(code, fn, padded=False) or ast.unparse(fn)
    used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    if any(w in used for _, w in mapping):
        raise ParseError(f"{what}: cannot rename parameters {got} to {want}")
    renamed = _Renamer(dict(mapping)).visit(ast.parse(ast.unparse(fn)))
    return ast.unparse(renamed)


_PY_KEEP = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
            ast.Assign, ast.AnnAssign)


def parse_python_spec(text: str, sig: Signature, origin: str = "", *,
                      truncated: bool = False) -> Spec:
    """A candidate Python spec: complete ``precondition`` / ``postcondition`` sources,
    each preceded by every helper of the answer (definitions, imports, constants;
    top-level statements such as usage examples are not part of a spec)."""
    code = textwrap.dedent(spec_code(text, ANSWER_SYNTAX, ("precondition", "postcondition"),
                                     truncated))
    module = _py_module(code)
    pre = post = None
    helpers: list[str] = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "precondition":
            pre = _py_function_source(code, node, list(sig.names), "precondition")
        elif isinstance(node, ast.FunctionDef) and node.name == "postcondition":
            post = _py_function_source(code, node, [*sig.names, "result"], "postcondition")
        elif isinstance(node, _PY_KEEP):
            helpers.append(ast.get_source_segment(code, node, padded=False) or ast.unparse(node))
    if post is None:
        raise ParseError("no 'def postcondition' in the answer")
    aux = "\n\n".join(helpers)
    join = lambda src: f"{aux}\n\n{src}" if aux else src  # noqa: E731
    spec = Spec(
        precond=None if pre is None else join(pre), postcond=join(post), origin=origin
    )
    return with_id(spec)


def _py_parse_prefix(source: str) -> tuple[ast.Module | None, str, str]:
    """(module, parsed source, problem): the longest prefix that parses, cut at a
    column-0 statement, so an answer cut inside its last definition keeps the rest."""
    try:
        return ast.parse(source), source, ""
    except (SyntaxError, ValueError) as exc:
        first = f"not valid Python: {exc}"
    lines = source.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if re.match(r"(def|class|async|@|import|from)\b",
                                                          ln)]
    for cut in reversed(starts):
        prefix = "".join(lines[:cut])
        if not prefix.strip():
            break
        try:
            return ast.parse(prefix), prefix, f"{first}; the tail from line {cut + 1} was dropped"
        except (SyntaxError, ValueError):
            continue
    return None, source, first


def _py_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def python_adversaries_from(
    chunk: str, sig: Signature
) -> tuple[list[str], list[str], list[Helper]]:
    """Like :func:`veriscale.backends.lean.answers.lean_adversaries_from`, for Python: ``def F<i>(...)`` → ``def F(...)``."""
    fn = sig.name
    main_re = main_name_re(fn)
    module, source, problem = _py_parse_prefix(textwrap.dedent(chunk))
    if module is None:
        return [], [problem], []
    out: list[str] = []
    problems: list[str] = [problem] if problem else []
    pending: list[str] = []
    helpers: list[Helper] = []
    for node in module.body:
        seg = ast.get_source_segment(source, node, padded=False) or ast.unparse(node)
        m = main_re.match(node.name) if isinstance(node, ast.FunctionDef) else None
        if not m:
            if isinstance(node, _PY_KEEP):
                pending.append(seg)
                helpers.extend((name, seg) for name in _py_names(node))
            continue
        assert isinstance(node, ast.FunctionDef)
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            problems.append(Rejection(
                f"{node.name}: must take plain parameters {list(sig.names)}",
                "wrong_signature"))
            continue
        got = [a.arg for a in args.args]
        if got != list(sig.names):
            problems.append(Rejection(f"{node.name}: parameters {got}, expected "
                                      f"{list(sig.names)}", "wrong_signature"))
            continue
        code = "\n\n".join([*pending, seg])
        pending = []
        if node.name != fn:
            code = rename_ident(code, node.name, fn)
        out.append(code.strip() + "\n")
    if not out and not problems and not helpers:
        problems.append(f"no function named {fn} (or {fn}<i>)")
    return out, problems, helpers


ANSWER_SYNTAX = AnswerSyntax(
    fences=("python", "py", "python3"), comment=COMMENT, markdown_headings=False,
    defined_names=defined_names, adversaries_from=python_adversaries_from,
)
"""How Python code sits in an answer (``#`` starts a comment, so no line is markdown)."""

parse_spec = parse_python_spec  # the name :class:`~veriscale.backends.language.ModuleLLMParts` calls
