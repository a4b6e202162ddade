"""Offline Lean adversaries: the five red-team strategies and near-miss perturbations.

Each strategy of the paper's red-team prompt (constant return, input echoing,
trivial synthesis, malicious deletion, edge-case exploitation) is rendered as a
Lean ``def`` from the return type and the parameter types. Near-miss adversaries
run the reference implementation and perturb its result (off by one, an element
dropped / swapped / duplicated, order reversed, Bool negated, Option emptied, a
character dropped): wrong in the small ways a flawed postcondition most often misses.
"""

from __future__ import annotations

import re
import textwrap

from veriscale.backends.language import Template, assemble_templates
from veriscale.backends.lean.render import code_header
from veriscale.backends.lean.sections import lean_sections
from veriscale.benchmark.model import Param, Signature, Task
from veriscale.values import ArrayT, ListT, Opaque, OptionT, ProdT, Scalar, ValueType


def _is(t: ValueType, *names: str) -> bool:
    return isinstance(t, Scalar) and t.name in names


def _seq(t: ValueType) -> bool:
    return isinstance(t, (ListT, ArrayT)) or _is(t, "String")

def lean_constants(t: ValueType) -> list[str]:
    if _is(t, "Nat", "Int"):
        return ["0", "1"]
    if _is(t, "UInt8"):
        return ["0"]
    if _is(t, "Bool"):
        return ["false", "true"]
    if _is(t, "String"):
        return ['""', '"a"']
    if _is(t, "Char"):
        return ["'a'"]
    if _is(t, "Float"):
        return ["0.0"]
    if isinstance(t, ListT):
        inner = lean_constants(t.elem)
        return ["[]", *([f"[{inner[0]}]"] if inner else [])]
    if isinstance(t, ArrayT):
        inner = lean_constants(t.elem)
        return ["#[]", *([f"#[{inner[0]}]"] if inner else [])]
    if isinstance(t, OptionT):
        inner = lean_constants(t.elem)
        return ["none", *([f"some ({inner[0]})"] if inner else [])]
    if isinstance(t, ProdT):
        a, b = lean_constants(t.fst), lean_constants(t.snd)
        return [f"({a[0]}, {b[0]})"] if a and b else []
    if isinstance(t, Opaque):
        return ["default"]
    return []


def _lean_list_perturbations(t: ListT, v: str) -> list[tuple[str, str]]:
    out = [
        ("reverse", f"{v}.reverse"),
        ("drop-first", f"{v}.drop 1"),
        ("drop-last", f"{v}.dropLast"),
        ("duplicate-first", f"{v}.take 1 ++ {v}"),
        ("swap-first-two", f"(match {v} with | a :: b :: t => b :: a :: t | l => l)"),
    ]
    elem = lean_perturbations(t.elem, "a")
    if elem:
        out.append(("perturb-first", f"(match {v} with | a :: t => ({elem[0][1]}) :: t | [] => [])"))
    return out


def _lean_drop_first_char(v: str) -> str:
    """``v`` (a String) without its first character. Not ``(v.toList.drop 1).asString``:
    compiled on the WASM Lean, a string built from a dropped list takes the Lean process
    down ("memory access out of bounds"), sometimes a few commands later, so every
    check after it in the file is lost; this form evaluates cleanly there (measured on
    empty, ASCII and non-ASCII strings) and elaborates on every Lean 4."""
    return f"String.join (({v}.toList.drop 1).map toString)"


def lean_perturbations(t: ValueType, v: str) -> list[tuple[str, str]]:
    """(label, Lean expression) pairs: ``v`` (a Lean term of type ``t``) changed a little."""
    if _is(t, "Nat"):
        return [("plus-one", f"{v} + 1"), ("minus-one", f"(if {v} = 0 then 1 else {v} - 1)")]
    if _is(t, "Int"):
        return [("plus-one", f"{v} + 1"), ("minus-one", f"{v} - 1")]
    if _is(t, "UInt8"):
        return [("plus-one", f"{v} + 1")]
    if _is(t, "Float"):
        return [("plus-one", f"{v} + 1.0")]
    if _is(t, "Bool"):
        return [("negate", f"!{v}")]
    if _is(t, "Char"):
        return [("other-char", f"(if {v} = 'a' then 'b' else 'a')")]
    if _is(t, "String"):
        return [("drop-char", _lean_drop_first_char(v)),
                ("reverse", f"{v}.toList.reverse.asString"),
                ("append-char", f"{v}.push 'a'")]
    if isinstance(t, ListT):
        return _lean_list_perturbations(t, v)
    if isinstance(t, ArrayT):
        return [(label, f"({expr}).toArray")
                for label, expr in _lean_list_perturbations(ListT(t.elem), f"{v}.toList")]
    if isinstance(t, OptionT):
        out = [("none", "none")]
        elem = lean_perturbations(t.elem, "a")
        if elem:
            out.append(("perturb-some",
                        f"(match {v} with | some a => some ({elem[0][1]}) | none => none)"))
        const = lean_constants(t.elem)
        if const:
            out.append(("flip-option",
                        f"(match {v} with | some _ => none | none => some ({const[0]}))"))
        return out
    if isinstance(t, ProdT):
        out = []
        a, b = lean_perturbations(t.fst, f"{v}.1"), lean_perturbations(t.snd, f"{v}.2")
        if a:
            out.append(("perturb-fst", f"({a[0][1]}, {v}.2)"))
        if b:
            out.append(("perturb-snd", f"({v}.1, {b[0][1]})"))
        if t.fst == t.snd:
            out.append(("swap", f"({v}.2, {v}.1)"))
        return out
    return []


def _lean_len(p: Param) -> str:
    return f"{p.name}.size" if isinstance(p.type, ArrayT) else f"{p.name}.length"


def _lean_as(ret: ValueType, list_expr: str) -> str:
    """A ``List`` expression converted to ``ret`` (List or Array)."""
    return f"({list_expr}).toArray" if isinstance(ret, ArrayT) else list_expr


def _lean_to_list(p: Param) -> str:
    return f"{p.name}.toList" if isinstance(p.type, ArrayT) else p.name


def _lean_strategies(sig: Signature) -> list[tuple[str, str, str]]:
    ret = sig.return_type
    out: list[tuple[str, str, str]] = []
    for c in lean_constants(ret):
        out.append(("constant-return", c, c))
    for p in sig.params:
        if p.type == ret:
            out.append(("input-echo", p.name, p.name))
        elif isinstance(ret, (ListT, ArrayT)) and isinstance(p.type, (ListT, ArrayT)) \
                and p.type.elem == ret.elem:
            out.append(("input-echo", p.name, _lean_as(ret, _lean_to_list(p))))
        elif isinstance(ret, OptionT) and p.type == ret.elem:
            out.append(("input-echo", p.name, f"some {p.name}"))
    seqs = [p for p in sig.params if _seq(p.type)]
    if isinstance(ret, (ListT, ArrayT)):
        c = lean_constants(ret.elem)
        for p in seqs:
            if c:
                out.append(("trivial-synthesis", f"replicate:{p.name}",
                            _lean_as(ret, f"List.replicate {_lean_len(p)} ({c[0]})")))
            if _is(ret.elem, "Nat"):
                out.append(("trivial-synthesis", f"range:{p.name}",
                            _lean_as(ret, f"List.range {_lean_len(p)}")))
            elif _is(ret.elem, "Int"):
                out.append(("trivial-synthesis", f"range:{p.name}",
                            _lean_as(ret, f"(List.range {_lean_len(p)}).map Int.ofNat")))
            if isinstance(p.type, (ListT, ArrayT)) and p.type.elem == ret.elem:
                lst = _lean_to_list(p)
                out.append(("malicious-deletion", f"drop-first:{p.name}",
                            _lean_as(ret, f"{lst}.drop 1")))
                out.append(("malicious-deletion", f"keep-half:{p.name}",
                            _lean_as(ret, f"{lst}.take ({_lean_len(p)} / 2)")))
    elif _is(ret, "Nat"):
        for p in seqs:
            out.append(("trivial-synthesis", f"length:{p.name}", _lean_len(p)))
    elif _is(ret, "Int"):
        for p in seqs:
            out.append(("trivial-synthesis", f"length:{p.name}", f"Int.ofNat {_lean_len(p)}"))
            if isinstance(p.type, (ListT, ArrayT)) and _is(p.type.elem, "Int"):
                out.append(("trivial-synthesis", f"sum:{p.name}",
                            f"{_lean_to_list(p)}.foldl (· + ·) 0"))
    elif _is(ret, "String"):
        for p in seqs:
            out.append(("trivial-synthesis", f"replicate:{p.name}",
                        f"(List.replicate {_lean_len(p)} 'a').asString"))
            if _is(p.type, "String"):
                out.append(("malicious-deletion", f"drop-first:{p.name}",
                            _lean_drop_first_char(p.name)))
    return out


def _lean_edge_condition(sig: Signature) -> tuple[str, str] | None:
    for p in sig.params:
        if _seq(p.type):
            return p.name, f"{_lean_len(p)} ≤ 1"
    for p in sig.params:
        if _is(p.type, "Nat", "Int"):
            return p.name, f"{p.name} = 0"
    return None


def lean_reference_def(task: Task, ref_name: str) -> str | None:
    """The GT code (after its code_aux) as ``def <ref_name> ...``, recursive calls renamed."""
    lean = lean_sections(task)
    if lean is None or not lean.code.strip():
        return None
    sig = task.signature
    body = lean.code.strip("\n")
    body = re.sub(rf"(?<![\w.']){re.escape(sig.name)}(?![\w'])", ref_name, body)
    definition = f"{code_header(sig, ref_name)} :=\n{_indent(body)}"
    # An implementation replaces the GT code *and* its code_aux in the Lean backend's
    # rendering, so a wrapper around the GT code carries the helpers it needs.
    aux = lean.code_aux.strip("\n")
    return f"{aux}\n\n{definition}" if aux.strip() else definition


def _indent(body: str) -> str:
    return textwrap.indent(textwrap.dedent(body), "  ")


def lean_templates(task: Task) -> list[Template]:
    sig = task.signature
    header = code_header(sig)

    def define(expr: str, before: str = "") -> str:
        main = f"{header} :=\n  {expr}\n"
        return f"{before}\n\n{main}" if before else main

    ref_name = f"{sig.name}_vs_ref"
    ref = lean_reference_def(task, ref_name)
    call = " ".join([ref_name, *(p.name for p in sig.params), "h_precond"])
    return assemble_templates(
        _lean_strategies(sig), define, wraps_reference=ref is not None,
        constants=lean_constants(sig.return_type), edge=_lean_edge_condition(sig),
        perturbations=lean_perturbations(sig.return_type, "r"),
        guarded=lambda cond, const: define(f"if {cond} then {const} else {call}", ref or ""),
        bound=lambda expr: define(f"let r := {call}\n  {expr}", ref or ""))
