"""The unexpected-output decision and the kill matrix, against a small in-memory backend."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from veriscale.backends.base import BackendStats, Implementation, Outcome, Spec, Verdict
from veriscale.benchmark.model import Input, Signature, Task
from veriscale.expansion.adversarial import (
    Decision,
    decide,
    outputs_differ,
    synthesize,
)
from veriscale.pipeline.config import AdversarySettings, load_config
from veriscale.values import parse_type

SIG = Signature.from_json({
    "name": "f",
    "parameters": [{"param_name": "xs", "param_type": "List Int"}],
    "return_type": "Int",
})
TASK = Task(id="toy", description="", signature=SIG)


class ToyBackend:
    """Implementations and specs are Python callables looked up by their code / id."""

    name = "toy"

    def __init__(self, impls: dict[str, Callable[[tuple], Any]],
                 gt: Callable[[tuple, Any], bool | None],
                 specs: dict[str, Callable[[tuple, Any], bool | None]]) -> None:
        self.impls, self.gt, self.specs = impls, gt, specs
        self.stats = BackendStats()
        self.compiled: list[str] = []
        self.runs = 0
        self.post_calls = 0

    def compile(self, task: Task, impl: Implementation | None = None,
                spec: Spec | None = None) -> str | None:
        assert impl is not None
        self.compiled.append(impl.id)
        return None if impl.code in self.impls else "compile: unknown code"

    def run(self, task: Task, impl: Implementation | None,
            inputs: Sequence[Input]) -> list[Outcome]:
        self.runs += 1
        assert impl is not None
        out = []
        for inp in inputs:
            try:
                out.append(Outcome(True, value=self.impls[impl.code](inp[0])))
            except Exception as exc:
                out.append(Outcome(False, error=f"crash: {exc}"))
        return out

    def postcondition_holds(self, task: Task, spec: Spec | None,
                            pairs: Sequence[tuple[Input, Any]]) -> list[Verdict]:
        self.post_calls += 1
        fn = self.gt if spec is None else self.specs[spec.id]
        return [Verdict.of(fn(inp[0], out)) for inp, out in pairs]


def impl(code: str) -> Implementation:
    return Implementation(code=code, id=f"adv-{code}", strategy="test", origin="unit")


# The task: return the maximum of xs; several outputs are never valid, except that the
# GT "postcondition" here accepts any element equal to the max, and cannot decide on 99.
def gt(xs: tuple, out: Any) -> bool | None:
    if out == 99:
        return None
    return out == max(xs)


IMPLS = {
    "zero": lambda xs: 0,
    "first": lambda xs: xs[0],
    "max_plus_zero": lambda xs: max(xs) + 0,  # always right
    "crash_on_empty_tail": lambda xs: xs[1],
    "ninety_nine": lambda xs: 99,
}
PAIRS = [(((1, 5, 2),), 5), (((7,),), 7), (((0, -3),), 0)]


def test_decide_truth_table() -> None:
    assert decide(Verdict.TRUE, 0, False) is Decision.GT_ACCEPTS
    assert decide(Verdict.UNKNOWN, 3, False) is Decision.GT_UNKNOWN
    assert decide(Verdict.FALSE, 0, False) is Decision.KEEP
    assert decide(Verdict.FALSE, 0, True) is Decision.NO_FLAWED_ACCEPTANCE
    assert decide(Verdict.FALSE, 2, True) is Decision.KEEP


def test_outputs_differ_uses_lean_equality() -> None:
    f = parse_type("Float")
    assert outputs_differ(f, math.nan, math.nan)
    assert not outputs_differ(f, 1.0, 1.0)
    assert outputs_differ(parse_type("List Int"), (1, 2), (2, 1))
    assert not outputs_differ(parse_type("Option Nat"), None, None)


def test_config_from_pipeline_settings() -> None:
    # one name per knob, from the TOML to the stage: the stage reads the settings
    cfg = load_config(None, adversaries={"max_adver_impl": 3,
                                         "require_flawed_acceptance": True}).adversaries
    assert isinstance(cfg, AdversarySettings)
    assert cfg.max_adver_impl == 3 and cfg.require_flawed_acceptance


def run(config: AdversarySettings | None = None, specs: dict | None = None, **kw: Any):
    specs = specs if specs is not None else {"spec-pos": lambda xs, out: out >= 0}
    backend = ToyBackend(IMPLS, gt, specs)
    advs = [impl(c) for c in [*IMPLS, "first", "broken"]]  # a duplicate and a non-compiling one
    config = config or AdversarySettings(check_flawed_specs=True)
    result = synthesize(TASK, PAIRS, advs, backend, config=config,
                        specs=[Spec(id=s, postcond="x") for s in specs], **kw)
    return result, backend


def test_kill_matrix_and_kept_outputs() -> None:
    result, backend = run()
    c = result.counts
    assert (c["adversaries_tried"], c["adversaries_compiled"]) == (6, 5)
    assert backend.runs == 5 and c["cells"] == 15
    # row 0 (expected 5): zero→0, first→1, crash→5(same), 99 unknown; row 1: zero→0, crash;
    # row 2 (expected 0): first→0 same, zero same, crash→-3, 99 unknown
    assert result.unexpected == [[0, 1], [0], [-3]]
    assert c["unexpected_kept"] == 4 and c["discarded_gt_unknown"] == 3
    assert c["discarded_gt_accepts"] == 0
    assert c["cells_failed"] == 1  # crash_on_empty_tail on [7]
    assert c["kept_also_accepted_by_flawed_spec"] == 3  # -3 is rejected by out >= 0
    kills = {a.impl.code: a.kills for a in result.adversaries}
    assert kills == {"zero": 2, "first": 1, "max_plus_zero": 0, "crash_on_empty_tail": 1,
                     "ninety_nine": 0, "broken": 0}
    assert c["adversaries_killing"] == 3

    data = json.loads(json.dumps(result.to_json()))
    assert data["rows"][0] == {"input": {"xs": [1, 5, 2]}, "expected": 5,
                               "unexpected": [0, 1], "accepted_by": [["spec-pos"], ["spec-pos"]]}
    cells = {(json.dumps(r["input"]), r["adversary"]): r for r in data["kill_matrix"]}
    crash = cells[(json.dumps({"xs": [7]}), "adv-crash_on_empty_tail")]
    assert crash["failure"].startswith("crash") and not crash["killed"]
    zero = cells[(json.dumps({"xs": [1, 5, 2]}), "adv-zero")]
    assert zero["output"] == 0 and zero["killed"] and zero["decision"] == "keep"
    unknown = cells[(json.dumps({"xs": [1, 5, 2]}), "adv-ninety_nine")]
    assert unknown["decision"] == "gt_unknown" and not unknown["killed"]
    assert sum(r["killed"] for r in data["kill_matrix"]) == c["cells_killed"] == 4
    assert not any(r["adversary"] == "adv-broken" for r in data["kill_matrix"])


def test_gt_accepted_alternatives_are_not_kept() -> None:
    backend = ToyBackend({"abs_max": lambda xs: max(xs, key=abs)},
                         lambda xs, out: abs(out) == max(abs(x) for x in xs), {})
    pairs = [(((3, -3),), 3), (((1, -4),), -4)]
    result = synthesize(TASK, pairs, [impl("abs_max")], backend)
    # max(..., key=abs) returns 3 on (3, -3) (same) and -4 (same): nothing differs
    assert result.counts["distinct_differing_outputs"] == 0
    backend.impls = {"neg": lambda xs: -xs[0]}
    result = synthesize(TASK, pairs, [impl("neg")], backend)
    assert result.unexpected == [[], [-1]]  # -3 is a valid alternative on row 0
    assert result.counts["discarded_gt_accepts"] == 1


def test_require_flawed_acceptance_filters() -> None:
    result, _ = run(AdversarySettings(require_flawed_acceptance=True))
    assert result.unexpected == [[0, 1], [0], []]
    assert result.counts["discarded_no_flawed_acceptance"] == 1
    result, _ = run(AdversarySettings(require_flawed_acceptance=True), specs={})
    assert result.counts["unexpected_kept"] == 0


def test_vacuous_flawed_specs_are_singled_out() -> None:
    result, _ = run(specs={"spec-true": lambda xs, out: True, "spec-pos": lambda xs, out: out >= 0})
    assert result.vacuous_specs == ["spec-true"]
    assert result.counts["kept_also_accepted_by_flawed_spec"] == 4
    assert result.counts["kept_accepted_by_nonvacuous_flawed_spec"] == 3


def test_screened_adversaries_are_not_recompiled_and_empty_inputs_are_fine() -> None:
    backend = ToyBackend(IMPLS, gt, {})
    advs = [impl("zero"), impl("first")]
    screened = {"adv-zero": None, "adv-first": "compile: earlier error"}
    result = synthesize(TASK, PAIRS, advs, backend, screened=screened)
    assert backend.compiled == []
    assert result.counts["adversaries_compiled"] == 1
    empty = synthesize(TASK, [], advs, backend, screened=screened)
    assert empty.counts["cells"] == 0 and empty.unexpected == []


def test_a_backend_that_returns_too_few_results_costs_cells_not_the_task() -> None:
    class Short(ToyBackend):
        def run(self, task, impl, inputs):  # type: ignore[override]
            return super().run(task, impl, inputs)[:1]

    result = synthesize(TASK, PAIRS, [impl("zero")], Short(IMPLS, gt, {}))
    # a short answer cannot be matched to its items: every cell of it is a failure
    assert result.counts["cells"] == 3 and result.counts["cells_failed"] == 3


def test_flawed_acceptance_is_only_asked_for_when_wanted() -> None:
    result, without = run(AdversarySettings())
    assert result.counts["unexpected_kept"] == 4
    assert result.counts["kept_also_accepted_by_flawed_spec"] == 0 and not result.vacuous_specs
    with_specs, asked = run(AdversarySettings(check_flawed_specs=True))
    assert with_specs.counts["kept_also_accepted_by_flawed_spec"] == 3
    assert without.post_calls < asked.post_calls  # one oracle round fewer


def test_sample_cells_is_seeded_uniform_and_bounded() -> None:
    from veriscale.expansion.adversarial import sample_cells

    assert sample_cells(3, 2, 0, 1) == [[0, 1, 2], [0, 1, 2]]  # no budget: every cell
    assert sample_cells(3, 2, 6, 1) == [[0, 1, 2], [0, 1, 2]]  # budget covers the grid
    got = sample_cells(50, 8, 100, 7)
    assert sum(len(c) for c in got) == 100 and len(got) == 8
    assert all(c == sorted(set(c)) and all(0 <= r < 50 for r in c) for c in got)
    assert got == sample_cells(50, 8, 100, 7) != sample_cells(50, 8, 100, 8)


def test_cell_budget_limits_adversary_runs() -> None:
    full, _ = run(AdversarySettings())
    cut, _ = run(AdversarySettings(max_cells=7), seed=3)
    assert full.counts["cells"] == 15 and cut.counts["cells"] == 7
    assert cut.counts["cells_possible"] == 15
    # every sampled cell is decided exactly as in the full grid
    full_cells = {(c.row, c.adversary): c.decision for c in full.cells}
    assert all(full_cells[(c.row, c.adversary)] is c.decision for c in cut.cells)
    # the backend's default budget applies when the config leaves it unset
    advs = [impl(c) for c in IMPLS]
    backend = ToyBackend(IMPLS, gt, {})
    backend.default_cell_budget = 4
    assert synthesize(TASK, PAIRS, advs, backend).counts["cells"] == 4
