"""Offline Python adversaries: the five red-team strategies and near-miss perturbations
(see :mod:`veriscale.backends.lean.templates`; the same strategies, as Python functions)."""

from __future__ import annotations

import re

from veriscale.backends.language import Template, assemble_templates
from veriscale.backends.python.prompting import code_header, params
from veriscale.backends.python.sections import python_sections
from veriscale.benchmark.model import Param, Signature, Task
from veriscale.values import ArrayT, ListT, OptionT, ProdT, Scalar, ValueType


def _is(t: ValueType, *names: str) -> bool:
    return isinstance(t, Scalar) and t.name in names


def _seq(t: ValueType) -> bool:
    return isinstance(t, (ListT, ArrayT)) or _is(t, "String")

PY_REF = "_vs_reference"

def py_constants(t: ValueType) -> list[str]:
    """Python literals of the native form of ``t``: the "meaningless constants"."""
    if _is(t, "Nat", "Int", "UInt8"):
        return ["0", "1"]
    if _is(t, "Bool"):
        return ["False", "True"]
    if _is(t, "String"):
        return ['""', '"a"']
    if _is(t, "Char"):
        return ['"a"']
    if _is(t, "Float"):
        return ["0.0"]
    if isinstance(t, (ListT, ArrayT)):
        inner = py_constants(t.elem)
        return ["[]", *([f"[{inner[0]}]"] if inner else [])]
    if isinstance(t, OptionT):
        inner = py_constants(t.elem)
        return ["None", *inner[:1]]
    if isinstance(t, ProdT):
        a, b = py_constants(t.fst), py_constants(t.snd)
        return [f"({a[0]}, {b[0]})"] if a and b else []
    return []


def py_perturbations(t: ValueType, v: str) -> list[tuple[str, str]]:
    """(label, expression) pairs: ``v`` (a native value of ``t``) changed a little."""
    if _is(t, "Nat"):
        return [("plus-one", f"{v} + 1"), ("minus-one", f"({v} - 1 if {v} > 0 else 1)")]
    if _is(t, "Int"):
        return [("plus-one", f"{v} + 1"), ("minus-one", f"{v} - 1")]
    if _is(t, "UInt8"):
        return [("plus-one", f"({v} + 1) % 256")]
    if _is(t, "Float"):
        return [("plus-one", f"{v} + 1.0")]
    if _is(t, "Bool"):
        return [("negate", f"not {v}")]
    if _is(t, "Char"):
        return [("other-char", f"('b' if {v} == 'a' else 'a')")]
    if _is(t, "String"):
        return [("drop-char", f"{v}[1:]"), ("reverse", f"{v}[::-1]"),
                ("append-char", f"{v} + 'a'")]
    if isinstance(t, (ListT, ArrayT)):
        s = f"list({v})"
        out = [
            ("reverse", f"{s}[::-1]"),
            ("drop-first", f"{s}[1:]"),
            ("drop-last", f"{s}[:-1]"),
            ("duplicate-first", f"{s}[:1] + {s}"),
            ("swap-first-two", f"{s}[1:2] + {s}[:1] + {s}[2:]"),
        ]
        elem = py_perturbations(t.elem, "x")
        if elem:
            out.append(("perturb-first",
                        f"([(lambda x: {elem[0][1]})({s}[0])] + {s}[1:]) if {s} else {s}"))
        return out
    if isinstance(t, OptionT):
        out = [("none", "None")]
        elem = py_perturbations(t.elem, "x")
        if elem:
            out.append(("perturb-some", f"(None if {v} is None else (lambda x: {elem[0][1]})({v}))"))
        const = py_constants(t.elem)
        if const:
            out.append(("flip-option", f"({const[0]} if {v} is None else None)"))
        return out
    if isinstance(t, ProdT):
        out = []
        a, b = py_perturbations(t.fst, "x"), py_perturbations(t.snd, "x")
        if a:
            out.append(("perturb-fst", f"((lambda x: {a[0][1]})({v}[0]), {v}[1])"))
        if b:
            out.append(("perturb-snd", f"({v}[0], (lambda x: {b[0][1]})({v}[1]))"))
        if t.fst == t.snd:
            out.append(("swap", f"({v}[1], {v}[0])"))
        return out
    return []


def _py_len(p: Param) -> str:
    return f"len({p.name})"


def _py_strategies(sig: Signature) -> list[tuple[str, str, str]]:
    """(strategy, detail, body expression) for the spec-gaming strategies (no reference)."""
    ret = sig.return_type
    out: list[tuple[str, str, str]] = []
    for c in py_constants(ret):
        out.append(("constant-return", c, c))
    for p in sig.params:
        if p.type == ret:
            out.append(("input-echo", p.name, f"list({p.name})" if isinstance(ret, (ListT, ArrayT))
                        else p.name))
        elif isinstance(ret, (ListT, ArrayT)) and isinstance(p.type, (ListT, ArrayT)) \
                and p.type.elem == ret.elem:
            out.append(("input-echo", p.name, f"list({p.name})"))
        elif isinstance(ret, OptionT) and p.type == ret.elem:
            out.append(("input-echo", p.name, p.name))
    seqs = [p for p in sig.params if _seq(p.type)]
    if isinstance(ret, (ListT, ArrayT)):
        c = py_constants(ret.elem)
        for p in seqs:
            if c:
                out.append(("trivial-synthesis", f"replicate:{p.name}", f"[{c[0]}] * {_py_len(p)}"))
            if _is(ret.elem, "Nat", "Int"):
                out.append(("trivial-synthesis", f"range:{p.name}", f"list(range({_py_len(p)}))"))
            if isinstance(p.type, (ListT, ArrayT)) and p.type.elem == ret.elem:
                out.append(("malicious-deletion", f"drop-first:{p.name}", f"list({p.name})[1:]"))
                out.append(("malicious-deletion", f"keep-half:{p.name}",
                            f"list({p.name})[: len({p.name}) // 2]"))
    elif _is(ret, "Nat", "Int"):
        for p in seqs:
            out.append(("trivial-synthesis", f"length:{p.name}", _py_len(p)))
            if isinstance(p.type, (ListT, ArrayT)) and _is(p.type.elem, "Nat", "Int"):
                out.append(("trivial-synthesis", f"sum:{p.name}", f"sum({p.name})"))
    elif _is(ret, "String"):
        for p in seqs:
            out.append(("trivial-synthesis", f"replicate:{p.name}", f"'a' * {_py_len(p)}"))
            if _is(p.type, "String"):
                out.append(("malicious-deletion", f"drop-first:{p.name}", f"{p.name}[1:]"))
    return out


def _py_edge_condition(sig: Signature) -> tuple[str, str] | None:
    for p in sig.params:
        if _seq(p.type):
            return p.name, f"len({p.name}) <= 1"
    for p in sig.params:
        if _is(p.type, "Nat", "Int", "UInt8"):
            return p.name, f"{p.name} == 0"
    return None


def _py_reference(task: Task) -> str | None:
    py = python_sections(task)
    if py is None or not py.reference.strip():
        return None
    src = py.reference.strip("\n")
    return re.sub(r"(?<![\w.])reference(?!\w)", PY_REF, src)


def python_templates(task: Task) -> list[Template]:
    sig = task.signature
    header = code_header(sig)
    args = params(sig)
    ref = _py_reference(task)
    return assemble_templates(
        _py_strategies(sig), lambda expr: f"{header}:\n    return {expr}\n",
        wraps_reference=ref is not None, constants=py_constants(sig.return_type),
        edge=_py_edge_condition(sig), perturbations=py_perturbations(sig.return_type, "r"),
        guarded=lambda cond, const: (f"{ref}\n\n\n{header}:\n    if {cond}:\n        return "
                                     f"{const}\n    return {PY_REF}({args})\n"),
        bound=lambda expr: (f"{ref}\n\n\n{header}:\n    r = {PY_REF}({args})\n"
                            f"    return {expr}\n"))
