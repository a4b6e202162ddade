"""The rules of the paper's Appendix C for Coq prompts, with Coq's forbidden constructs."""

from __future__ import annotations

PROMPT_RULES = """\
Write Coq (Coq 8.16 standard library only).
- The precondition and the postcondition are bool-valued functions (use Z.eqb, Z.leb,
  Nat.eqb, String.eqb, andb/&&, orb/||, negb, forallb, existsb); they are checked by
  Compute, so they must reduce to true or false on concrete inputs.
- Give only the body of each definition; do not restate its header.
- Define helpers in the aux sections as Definition or Fixpoint (structural recursion).
- Forbidden: Axiom, Parameter, Variable, Hypothesis, Admitted, admit, Abort, Extract/
  Extraction, Set/Unset of any flag, Declare ML Module, Load, Redirect, Drop, Module,
  Section, Notation, Ltac, attributes (#[...]), Print/Compute/Eval/Check, and any library
  outside the Coq standard library.
- A specification must be exact: accept every correct output and reject every wrong one;
  it must not restate the implementation, and must not depend on how it computes.
"""
