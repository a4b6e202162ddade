-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def minMax_precond (xs : List Int) : Prop :=
  -- !benchmark @start precond
  xs.length > 0
  -- !benchmark @end precond


-- !benchmark @start code_aux

-- !benchmark @end code_aux


def minMax (xs : List Int) (h_precond : minMax_precond (xs)) : Int × Int :=
  -- !benchmark @start code
  match xs with
  | [] => (0, 0)
  | x :: rest => rest.foldl (fun (acc : Int × Int) y => (min acc.1 y, max acc.2 y)) (x, x)
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def minMax_postcond (xs : List Int) (result: Int × Int) (h_precond : minMax_precond (xs)) : Prop :=
  -- !benchmark @start postcond
  xs.any (fun x => x = result.1) = true ∧
  xs.any (fun x => x = result.2) = true ∧
  xs.all (fun x => result.1 ≤ x ∧ x ≤ result.2) = true
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem minMax_spec_satisfied (xs: List Int) (h_precond : minMax_precond (xs)) :
    minMax_postcond (xs) (minMax (xs) h_precond) h_precond := by
  -- !benchmark @start proof
  sorry
  -- !benchmark @end proof
