"""Decidability of bounded quantifiers over index pairs, proved by Lean in every file.

Lean decides ``∃ i, i < n ∧ P i`` and ``∀ i, i < n → P i`` (``Nat.decidableExistsLT``,
``Nat.decidableBallLT``), but not the forms VERINA's specifications also write:
two indices, ``∃ i j, i < n ∧ j < m ∧ P i j`` (verina_basic_40's precondition, "at
least two distinct values"; basic_9 and basic_24's postconditions), where the bound of
``i`` sits under ``∃ j``; a bound written ``i + k ≤ n`` (basic_21: a window of
``main``); and an existential that names its witness, ``∃ x, x = a ∧ P x``
(advanced_66).
Each instance below decides such a form through its nested form, by
``decidable_of_iff`` with the equivalence proved in the instance itself, so Lean
checks every one where it is declared; the specification's text is never changed.

They have low priority: an instance Lean already has is always tried first, and
``Decidable`` is a subsingleton, so which instance decides changes no answer. They
sit in a ``noncomputable section``: a kernel-mode file (no compiled-evaluation
prelude on WASM) cannot compile them and needs only their kernel reduction.
"""

from __future__ import annotations

PRELUDE = """\
noncomputable section
namespace VeriScaleDecidable
instance (priority := low) existsPairLT {n m : Nat} {P : Nat → Nat → Prop}
    [∀ i j, Decidable (P i j)] : Decidable (∃ i j, i < n ∧ j < m ∧ P i j) :=
  decidable_of_iff (∃ i, i < n ∧ ∃ j, j < m ∧ P i j)
    ⟨fun ⟨i, hi, j, hj, hp⟩ => ⟨i, j, hi, hj, hp⟩, fun ⟨i, j, hi, hj, hp⟩ => ⟨i, hi, j, hj, hp⟩⟩
instance (priority := low) existsPairLTLT {n : Nat} {P : Nat → Nat → Prop}
    [∀ i j, Decidable (P i j)] : Decidable (∃ i j, i < j ∧ j < n ∧ P i j) :=
  decidable_of_iff (∃ j, j < n ∧ ∃ i, i < j ∧ P i j)
    ⟨fun ⟨j, hj, i, hi, hp⟩ => ⟨i, j, hi, hj, hp⟩, fun ⟨i, j, hi, hj, hp⟩ => ⟨j, hj, i, hi, hp⟩⟩
instance (priority := low) existsAddLE {k n : Nat} {P : Nat → Prop} [DecidablePred P] :
    Decidable (∃ i, i + k ≤ n ∧ P i) :=
  decidable_of_iff (∃ i, i < n + 1 ∧ (i + k ≤ n ∧ P i))
    ⟨fun ⟨i, _, h, hp⟩ => ⟨i, h, hp⟩, fun ⟨i, h, hp⟩ => ⟨i, by omega, h, hp⟩⟩
instance (priority := low) existsEqLeft {α : Sort _} {a : α} {P : α → Prop} [Decidable (P a)] :
    Decidable (∃ x, x = a ∧ P x) :=
  decidable_of_iff (P a) ⟨fun h => ⟨a, rfl, h⟩, fun ⟨_, hx, h⟩ => hx ▸ h⟩
instance (priority := low) forallPairLTLT {n : Nat} {P : Nat → Nat → Prop}
    [∀ i j, Decidable (P i j)] : Decidable (∀ i j, i < j → j < n → P i j) :=
  decidable_of_iff (∀ j, j < n → ∀ i, i < j → P i j)
    ⟨fun hf i j hi hj => hf j hj i hi, fun hf j hj i hi => hf i j hi hj⟩
end VeriScaleDecidable
end"""
"""Declared in every Lean file's base, after the runner's own prelude."""
