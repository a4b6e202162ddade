"""Test-suite reduction (paper §3.2): Plus suite → Lite suite.

* :mod:`.reject_inputs` — boundary-preserving reduction of unexpected inputs,
  reproducing the authors' released selection exactly;
* :mod:`.pairs` — adversary-killing reduction of expected pairs (greedy set
  cover, then a budget fill).
"""

from veriscale.reduction.pairs import (
    MAX_PAIRS_PER_TASK,
    PairReductionResult,
    PairRow,
    PairSelection,
    greedy_set_cover,
    pair_rows,
    reduce_pairs,
)
from veriscale.reduction.reject_inputs import (
    KEEP_PER_CRITICAL_BUCKET,
    KEEP_REJECT_INPUTS_PER_TASK,
    InputSignature,
    ReductionResult,
    RejectSelection,
    input_signature,
    reduce_canonical_inputs,
    reduce_reject_inputs,
)

__all__ = [
    "KEEP_PER_CRITICAL_BUCKET",
    "KEEP_REJECT_INPUTS_PER_TASK",
    "MAX_PAIRS_PER_TASK",
    "InputSignature",
    "PairReductionResult",
    "PairRow",
    "PairSelection",
    "ReductionResult",
    "RejectSelection",
    "greedy_set_cover",
    "input_signature",
    "pair_rows",
    "reduce_canonical_inputs",
    "reduce_pairs",
    "reduce_reject_inputs",
]
