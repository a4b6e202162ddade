-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def rotateList_precond (xs : List Int) (k : Nat) : Prop :=
  -- !benchmark @start precond
  True
  -- !benchmark @end precond


-- !benchmark @start code_aux

-- !benchmark @end code_aux


def rotateList (xs : List Int) (k : Nat) (h_precond : rotateList_precond (xs) (k)) : List Int :=
  -- !benchmark @start code
  let n := xs.length
  if n = 0 then [] else xs.drop (k % n) ++ xs.take (k % n)
  -- !benchmark @end code


-- !benchmark @start postcond_aux
-- The element at position i, if there is one.
def elemAt : List Int → Nat → Option Int
  | [], _ => none
  | x :: _, 0 => some x
  | _ :: rest, i + 1 => elemAt rest i
-- !benchmark @end postcond_aux


@[reducible, simp]
def rotateList_postcond (xs : List Int) (k : Nat) (result: List Int) (h_precond : rotateList_precond (xs) (k)) : Prop :=
  -- !benchmark @start postcond
  result.length = xs.length ∧
  (List.range xs.length).all (fun i => elemAt result i = elemAt xs ((i + k) % xs.length)) = true
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem rotateList_spec_satisfied (xs: List Int) (k: Nat) (h_precond : rotateList_precond (xs) (k)) :
    rotateList_postcond (xs) (k) (rotateList (xs) (k) h_precond) h_precond := by
  -- !benchmark @start proof
  sorry
  -- !benchmark @end proof
