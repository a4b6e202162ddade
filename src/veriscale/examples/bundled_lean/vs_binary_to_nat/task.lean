-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def binaryToNat_precond (digits : List Nat) : Prop :=
  -- !benchmark @start precond
  digits.all (fun d => d = 0 ∨ d = 1)
  -- !benchmark @end precond


-- !benchmark @start code_aux

-- !benchmark @end code_aux


def binaryToNat (digits : List Nat) (h_precond : binaryToNat_precond (digits)) : Nat :=
  -- !benchmark @start code
  digits.foldl (fun acc d => 2 * acc + d) 0
  -- !benchmark @end code


-- !benchmark @start postcond_aux
-- The value of a digit list read least significant digit first.
def lsbFirstValue : List Nat → Nat
  | [] => 0
  | d :: ds => d + 2 * lsbFirstValue ds
-- !benchmark @end postcond_aux


@[reducible, simp]
def binaryToNat_postcond (digits : List Nat) (result: Nat) (h_precond : binaryToNat_precond (digits)) : Prop :=
  -- !benchmark @start postcond
  result = lsbFirstValue digits.reverse
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem binaryToNat_spec_satisfied (digits: List Nat) (h_precond : binaryToNat_precond (digits)) :
    binaryToNat_postcond (digits) (binaryToNat (digits) h_precond) h_precond := by
  -- !benchmark @start proof
  sorry
  -- !benchmark @end proof
