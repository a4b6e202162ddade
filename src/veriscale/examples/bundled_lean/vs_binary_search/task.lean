-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def binarySearch_precond (arr : Array Int) (target : Int) : Prop :=
  -- !benchmark @start precond
  let xs := arr.toList
  (xs.zip xs.tail).all (fun p => p.1 ≤ p.2)
  -- !benchmark @end precond


-- !benchmark @start code_aux
-- Binary search in xs[lo, hi); `fuel` bounds the number of halvings.
def searchRange (xs : List Int) (target : Int) (lo hi : Nat) : Nat → Option Nat
  | 0 => none
  | fuel + 1 =>
    if lo < hi then
      let mid := (lo + hi) / 2
      let v := xs.getD mid 0
      if v = target then some mid
      else if v < target then searchRange xs target (mid + 1) hi fuel
      else searchRange xs target lo mid fuel
    else none
-- !benchmark @end code_aux


def binarySearch (arr : Array Int) (target : Int) (h_precond : binarySearch_precond (arr) (target)) : Option Nat :=
  -- !benchmark @start code
  searchRange arr.toList target 0 arr.size (arr.size + 1)
  -- !benchmark @end code


-- !benchmark @start postcond_aux
-- The element at position i, if there is one.
def elemAt : List Int → Nat → Option Int
  | [], _ => none
  | x :: _, 0 => some x
  | _ :: rest, i + 1 => elemAt rest i
-- !benchmark @end postcond_aux


@[reducible, simp]
def binarySearch_postcond (arr : Array Int) (target : Int) (result: Option Nat) (h_precond : binarySearch_precond (arr) (target)) : Prop :=
  -- !benchmark @start postcond
  (result = none → arr.toList.all (fun x => x ≠ target) = true) ∧
  result.all (fun i => elemAt arr.toList i = some target) = true
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem binarySearch_spec_satisfied (arr: Array Int) (target: Int) (h_precond : binarySearch_precond (arr) (target)) :
    binarySearch_postcond (arr) (target) (binarySearch (arr) (target) h_precond) h_precond := by
  -- !benchmark @start proof
  sorry
  -- !benchmark @end proof
