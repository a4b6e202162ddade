"""Lean's parts of the LLM prompts: headers (rendered by
:mod:`veriscale.backends.lean.render`), rules for specifications, the red team's
forbidden constructs, loopholes and strategies (paper Appendix C, in our own words),
and the ground truth as shown to a model."""

from __future__ import annotations

import textwrap

from veriscale.backends.base import Spec
from veriscale.backends.lean.render import code_header, postcond_header, precond_header
from veriscale.backends.lean.sections import lean_sections
from veriscale.benchmark.model import Task

__all__ = ["COMMENT", "FORBIDDEN", "LOOPHOLES", "SPEC_RULES", "STRATEGIES", "code_header",
           "gt_precondition_text", "postcond_header", "precond_header", "spec_texts"]
"""What :class:`~veriscale.backends.language.ModuleLLMParts` reads (headers: the renderer's)."""

COMMENT = "--"  # a line comment: the markers of an answer start with it

SPEC_RULES = (
    "Write complete Lean 4 definitions `def <name> ... := <body>` with exactly the "
    "given names, parameter names and parameter types. Use core Lean 4 only (no "
    "Mathlib), and keep the propositions decidable where you can."
)

FORBIDDEN = """\
Your functions must be pure and total. Never:
- declare an `axiom`, use `sorry`, or define anything `opaque` or `noncomputable`;
- use `unsafe`, `partial`, or recursion that does not terminate;
- use `@[implemented_by ...]`, `@[extern ...]` or any attribute that changes how code runs;
- declare an `instance`, or redefine `BEq`, `DecidableEq`, `LE`, `LT`, `Ord`, `Hashable`,
  `Membership`, `GetElem` or arithmetic for standard types;
- use `IO`, `ST`, references or any side effect; `Classical.choose` / `choose_spec`;
- use `#eval`, `#exit`, `run_cmd`, `macro`, `syntax`, `elab`, `set_option` or `open ... in`;
- define new `structure`s or `inductive`s, wrapper or sentinel types, `Subtype` values with
  fake proofs, or `Decidable` instances that always say yes.
Outputs are plain values of the declared type (Nat, Int, String, List α, Array α, Option α,
tuples of these, ...)."""

LOOPHOLES = (
    "- does it check `List.length` but not the elements?\n"
    "- does it check sortedness but not that the elements come from the input?\n"
    "- does it use `∃` without bounding the witness?\n"
    "- is a `∀ x ∈ xs` check vacuously true on the empty list?"
)

STRATEGIES = (
    "constant return (`0`, `[]`, `#[]`, `\"\"`, `false`, `none`); input echoing "
    "(return an input unchanged); trivial synthesis (`List.replicate n 0`, "
    "`List.range n`, made-up data of the right shape or length); malicious deletion "
    "(delete everything, return `[]` / `#[]`); edge-case exploitation (force empty / "
    "zero / `none` states that make universal checks vacuous)"
)


def _indent(body: str) -> str:
    lines = body.strip("\n").splitlines() or ["True"]
    return textwrap.indent(textwrap.dedent("\n".join(lines)), "  ")


def _definition(header: str, aux: str, body: str) -> str:
    definition = f"{header} :=\n{_indent(body)}"
    return f"{aux.strip()}\n\n{definition}" if aux.strip() else definition


def gt_precondition_text(task: Task) -> str:
    """The full GT precondition definition (with its helpers), as shown to the model."""
    lean = lean_sections(task)
    body = lean.precond if lean is not None else "True"
    aux = lean.precond_aux if lean is not None else ""
    return _definition(precond_header(task.signature), aux, body)


def spec_texts(task: Task, spec: Spec) -> tuple[str, str]:
    """(precondition, postcondition) definitions of ``spec``, the GT where it has none."""
    lean = lean_sections(task)
    sig = task.signature
    if spec.precond is not None:
        pre_body, pre_aux = spec.precond, spec.precond_aux
    else:
        pre_body, pre_aux = (lean.precond, lean.precond_aux) if lean else ("True", "")
    if spec.postcond is not None:
        post_body, post_aux = spec.postcond, spec.postcond_aux
    else:
        post_body, post_aux = (lean.postcond, lean.postcond_aux) if lean else ("True", "")
    return (_definition(precond_header(sig), pre_aux, pre_body),
            _definition(postcond_header(sig), post_aux, post_body))
