"""Offline red team for Coq: the paper's five strategies (constant return, input echo,
trivial synthesis, malicious deletion, edge case) plus near-miss perturbations of the
reference's result, as adversary templates."""

from __future__ import annotations

from typing import Any

from veriscale.backends.coq import format as F
from veriscale.backends.coq.sections import coq_sections
from veriscale.backends.coq.types import coq_type
from veriscale.backends.language import Template, assemble_templates
from veriscale.benchmark.model import Task
from veriscale.values import ArrayT, ListT, OptionT, ProdT, Scalar, ValueType


def _is(t: ValueType, name: str) -> bool:
    return isinstance(t, Scalar) and t.name == name


def constants(t: ValueType) -> list[str]:
    """A few constant values of ``t`` (within the nat bound), as Coq text."""
    if _is(t, "Int"):
        return ["0%Z", "1%Z", "(-1)%Z"]
    if _is(t, "Nat"):
        return ["0%nat", "1%nat"]
    if _is(t, "Bool"):
        return ["true", "false"]
    if _is(t, "String"):
        return ['""%string', '"a"%string']
    if _is(t, "Char"):
        return ['"a"%char']
    if isinstance(t, (ListT, ArrayT)):
        return [f"(@nil {_atom(t.elem)})"]
    if isinstance(t, OptionT):
        return [f"(@None {_atom(t.elem)})"]
    if isinstance(t, ProdT):
        a, b = constants(t.fst), constants(t.snd)
        return [f"({x}, {y})" for x, y in zip(a, b, strict=False)] if a and b else []
    return []


def _atom(t: ValueType) -> str:
    text = coq_type(t)
    return text if text.isidentifier() else f"({text})"


def perturbations(t: ValueType, v: str) -> list[tuple[str, str]]:
    """Near misses of the value ``v : t`` (Coq text): off by one, element dropped..."""
    if _is(t, "Int"):
        return [("plus-one", f"({v} + 1)%Z"), ("minus-one", f"({v} - 1)%Z"),
                ("negate", f"(- {v})%Z")]
    if _is(t, "Nat"):
        return [("succ", f"(S {v})"), ("pred", f"(Nat.pred {v})")]
    if _is(t, "Bool"):
        return [("negate", f"(negb {v})")]
    if _is(t, "String"):
        return [("drop-first-char",
                 f"(match {v} with EmptyString => EmptyString | String _ s => s end)"),
                ("append-char", f'({v} ++ "a")%string')]
    if isinstance(t, (ListT, ArrayT)):
        return [("drop-first", f"(tl {v})"), ("reverse", f"(rev {v})"),
                ("duplicate-first", f"(match {v} with nil => nil | cons h r => h :: h :: r end)"),
                ("swap-first-two",
                 f"(match {v} with cons a (cons b r) => b :: a :: r | l => l end)"),
                ("drop-last", f"(removelast {v})")]
    if isinstance(t, OptionT):
        return [("none", f"(@None {_atom(t.elem)})")]
    if isinstance(t, ProdT):
        out = [(f"fst-{k}", f"({e}, snd {v})") for k, e in perturbations(t.fst, f"(fst {v})")]
        out += [(f"snd-{k}", f"(fst {v}, {e})") for k, e in perturbations(t.snd, f"(snd {v})")]
        return out
    return []


def _edge(sig: Any) -> tuple[str, str] | None:
    for p in sig.params:
        if isinstance(p.type, (ListT, ArrayT)):
            return f"{p.name}-empty", f"(match {p.name} with nil => true | _ => false end)"
        if _is(p.type, "Int"):
            return f"{p.name}-zero", f"(Z.eqb {p.name} 0%Z)"
        if _is(p.type, "Nat"):
            return f"{p.name}-zero", f"(Nat.eqb {p.name} 0%nat)"
        if _is(p.type, "String"):
            return f"{p.name}-empty", f'(String.eqb {p.name} ""%string)'
    return None


def _strategies(sig: Any) -> list[tuple[str, str, str]]:
    ret = sig.return_type
    out = [("constant-return", c, c) for c in constants(ret)]
    for p in sig.params:
        if p.type == ret:
            out.append(("input-echo", p.name, p.name))
        if isinstance(p.type, (ListT, ArrayT)):
            if _is(ret, "Nat"):
                out.append(("trivial-synthesis", f"length {p.name}", f"(length {p.name})"))
            if _is(ret, "Int"):
                out.append(("trivial-synthesis", f"length {p.name}",
                            f"(Z.of_nat (length {p.name}))"))
            if isinstance(ret, (ListT, ArrayT)) and p.type.elem == ret.elem:
                out.append(("malicious-deletion", f"tl {p.name}", f"(tl {p.name})"))
                out.append(("trivial-synthesis", f"rev {p.name}", f"(rev {p.name})"))
    return out


def code_header(task: Task, name: str | None = None) -> str:
    sig = task.signature
    binders = " ".join(f"({p.name} : {p.type_text})" for p in sig.params)
    return f"Definition {name or sig.name} {binders} : {sig.return_text} :="


def code_definition(task: Task, body: str, code_aux: str = "") -> str:
    """A CodeGen body (VERINA stores bodies) as ``code_aux`` + the full definition."""
    main = f"{code_header(task)}\n{body.rstrip()}\n."
    return f"{code_aux.strip()}\n\n{main}\n" if code_aux.strip() else main + "\n"


def reference_definition(task: Task, ref_name: str) -> str | None:
    """The GT code as ``Definition <ref_name> ...`` after its ``code_aux``."""
    coq = coq_sections(task)
    if coq is None or not coq.code.strip() or F.takes_proof_argument(coq):
        return None
    aux = coq.code_aux.strip("\n")
    main = f"{code_header(task, ref_name)}\n{coq.code.rstrip()}\n."
    return f"{aux}\n\n{main}" if aux.strip() else main


def adversary_templates(task: Task) -> list[Template]:
    sig = task.signature
    header = code_header(task)

    def define(expr: str, before: str = "") -> str:
        main = f"{header}\n  {expr}.\n"
        return f"{before}\n\n{main}" if before else main

    ref_name = f"{sig.name}_vs_ref"
    ref = reference_definition(task, ref_name)
    call = "(" + " ".join([ref_name, *(p.name for p in sig.params)]) + ")"
    return assemble_templates(
        _strategies(sig), define, wraps_reference=ref is not None,
        constants=constants(sig.return_type), edge=_edge(sig),
        perturbations=perturbations(sig.return_type, "vs_r"),
        guarded=lambda cond, const: define(f"if {cond} then {const} else {call}", ref or ""),
        bound=lambda expr: define(f"let vs_r := {call} in {expr}", ref or ""))
