-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def argmax_precond (xs : List Int) : Prop :=
  -- !benchmark @start precond
  xs.length > 0
  -- !benchmark @end precond


-- !benchmark @start code_aux
-- Scan `rest` (which starts at position idx), keeping the first position of the largest value.
def argmaxScan : List Int → Nat → Int → Nat → Nat
  | [], _, _, bestIdx => bestIdx
  | x :: rest, idx, best, bestIdx =>
    if x > best then argmaxScan rest (idx + 1) x idx
    else argmaxScan rest (idx + 1) best bestIdx
-- !benchmark @end code_aux


def argmax (xs : List Int) (h_precond : argmax_precond (xs)) : Nat :=
  -- !benchmark @start code
  match xs with
  | [] => 0
  | x :: rest => argmaxScan rest 1 x 0
  -- !benchmark @end code


-- !benchmark @start postcond_aux
-- The element at position i, if there is one.
def elemAt : List Int → Nat → Option Int
  | [], _ => none
  | x :: _, 0 => some x
  | _ :: rest, i + 1 => elemAt rest i
-- !benchmark @end postcond_aux


@[reducible, simp]
def argmax_postcond (xs : List Int) (result: Nat) (h_precond : argmax_precond (xs)) : Prop :=
  -- !benchmark @start postcond
  result < xs.length ∧
  (elemAt xs result).all (fun m => xs.all (fun x => x ≤ m)) = true
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem argmax_spec_satisfied (xs: List Int) (h_precond : argmax_precond (xs)) :
    argmax_postcond (xs) (argmax (xs) h_precond) h_precond := by
  -- !benchmark @start proof
  sorry
  -- !benchmark @end proof
