-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def natDivMod_precond (a : Nat) (b : Nat) : Prop :=
  -- !benchmark @start precond
  b > 0
  -- !benchmark @end precond


-- !benchmark @start code_aux

-- !benchmark @end code_aux


def natDivMod (a : Nat) (b : Nat) (h_precond : natDivMod_precond (a) (b)) : Nat × Nat :=
  -- !benchmark @start code
  (a / b, a % b)
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def natDivMod_postcond (a : Nat) (b : Nat) (result: Nat × Nat) (h_precond : natDivMod_precond (a) (b)) : Prop :=
  -- !benchmark @start postcond
  result.1 * b + result.2 = a ∧ result.2 < b
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem natDivMod_spec_satisfied (a: Nat) (b: Nat) (h_precond : natDivMod_precond (a) (b)) :
    natDivMod_postcond (a) (b) (natDivMod (a) (b) h_precond) h_precond := by
  -- !benchmark @start proof
  sorry
  -- !benchmark @end proof
