"""The adversarial stages with the real Python backend on a multi-valid task written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscale.backends.base import Implementation, Verdict
from veriscale.backends.datasets import load_benchmark
from veriscale.backends.python.format import new_task_dir
from veriscale.benchmark.model import Task
from veriscale.expansion.adversarial import (
    generate_adversaries,
    synthesize,
    synthesize_unexpected,
)
from veriscale.llm.offline import OfflineProvider

# Any pair (i, j), i < j, with xs[i] + xs[j] == target is a valid output.
TASK_PY = """# veriscale: aux
def pair_ok(xs, target, p):
    i, j = p
    return 0 <= i < j < len(xs) and xs[i] + xs[j] == target

# veriscale: precondition
def precondition(xs, target):
    return any(xs[i] + xs[j] == target for i in range(len(xs)) for j in range(i + 1, len(xs)))

# veriscale: reference
def reference(xs, target):
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if xs[i] + xs[j] == target:
                return (i, j)
    return (0, 0)

# veriscale: postcondition
def postcondition(xs, target, result):
    i, j = result
    return i < j and j < len(xs) and xs[i] + xs[j] == target
"""


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    root = tmp_path_factory.mktemp("bench")
    new_task_dir(
        root, "pair_sum", "pairSum", [("xs", "List Int"), ("target", "Int")], "Nat × Nat",
        TASK_PY,
        description="-----Description-----\nIndices i < j with xs[i] + xs[j] = target.\n"
        "-----Input-----\nxs, target\n-----Output-----\nA pair (i, j).\n",
        tests=[{"input": {"xs": [1, 2, 3], "target": 5}, "expected": "(1, 2)", "unexpected": []}],
        rejects=[{"input": {"xs": [], "target": 0}}],
        metadata={"several_valid_outputs": True},
    )
    tasks, issues = load_benchmark(Path(root))
    assert not issues, [str(i) for i in issues]
    return tasks[0]


@pytest.fixture(scope="module")
def backend():
    from veriscale.backends.registry import make_backend

    be = make_backend("python")
    yield be
    be.close()


INPUTS = [((1, 2, 3, 4), 5), ((2, 2, 2), 4), ((0, 7), 7), ((5, -1, 6, 0), 5), ((1, 1), 2)]


@pytest.fixture(scope="module")
def pairs(task: Task, backend) -> list:
    outs = backend.run(task, None, INPUTS)
    assert all(o.ok for o in outs)
    return [(i, o.value) for i, o in zip(INPUTS, outs, strict=True)]


def adv(name: str, body: str) -> Implementation:
    code = f"def pairSum(xs, target):\n{body}\n"
    return Implementation(code=code, id=f"adv-{name}", strategy=name, origin="test")


def test_valid_alternatives_are_not_kept_and_kept_outputs_are_gt_rejected(task, backend, pairs):
    adversaries = [
        # the *last* valid pair: a different but correct output
        adv("last_pair", "    best = (0, 0)\n    for i in range(len(xs)):\n"
                         "        for j in range(i + 1, len(xs)):\n"
                         "            if xs[i] + xs[j] == target:\n                best = (i, j)\n"
                         "    return best"),
        adv("constant", "    return (0, 1)"),
        adv("swapped", "    r = reference(xs, target)\n    return (r[1], r[0])"),
        adv("crash", "    return (0, 1) if len(xs) > 2 else 1 // 0"),
        adv("syntax", "    return (0, 1"),
        adv("negative", "    return (-1, 0)"),
    ]
    adversaries[2] = Implementation(
        code=TASK_PY.split("# veriscale: reference")[1].split("# veriscale: postcondition")[0]
        + adversaries[2].code, id="adv-swapped", strategy="swapped", origin="test")
    result = synthesize(task, pairs, adversaries, backend)
    c = result.counts
    assert c["adversaries_tried"] == 6 and c["adversaries_compiled"] == 5
    # every kept output is rejected by the GT postcondition
    kept = [(inp, v) for inp, vals in zip(result.inputs, result.unexpected, strict=True)
            for v in vals]
    assert kept
    assert backend.postcondition_holds(task, None, kept) == [Verdict.FALSE] * len(kept)
    # the last-pair adversary differs on (1, 2, 3, 4) / 5 and on (2, 2, 2) / 4, validly
    last = {(cell.row, cell.decision.value) for cell in result.cells
            if cell.adversary == "adv-last_pair"}
    assert (0, "gt_accepts") in last and (1, "gt_accepts") in last
    assert not any(a.kills for a in result.adversaries if a.impl.id == "adv-last_pair")
    assert (1, 2) not in result.unexpected[0] and (1, 2) not in result.unexpected[1]
    assert c["discarded_gt_accepts"] >= 2
    # negative indices are ill-typed for Nat × Nat: failures, not outputs
    neg = [cell for cell in result.cells if cell.adversary == "adv-negative"]
    assert neg and all(not cell.outcome.ok for cell in neg)
    # the swapped pair is always wrong (i > j), and (0, 1) is wrong where xs[0] + xs[1] != target
    assert result.unexpected[0] == [(0, 1), (3, 0)]
    assert result.unexpected[4] == [(1, 0)]  # (0, 1) is the expected output here


def test_pipeline_stages_with_the_offline_provider(task, backend, pairs):
    provider = OfflineProvider(seed=1)
    artifact = generate_adversaries(task, provider, backend, None)
    counts = artifact["counts"]
    assert counts["specs_compiled"] == counts["specs_proposed"] >= 3
    assert counts["adversaries_compiled"] == counts["adversaries_tried"] >= 5
    data = synthesize_unexpected(task, pairs, json.loads(json.dumps(artifact)), backend,
                                 {"check_flawed_specs": True})
    json.dumps(data)
    assert data["counts"]["adversaries_tried"] == counts["adversaries_tried"]
    assert data["counts"]["unexpected_kept"] > 0
    ids = {a["id"] for a in artifact["adversaries"]}
    assert {r["adversary"] for r in data["kill_matrix"]} <= ids
    sig = task.signature
    kept = [(sig.decode_input(r["input"]), sig.decode_output(u))
            for r in data["rows"] for u in r["unexpected"]]
    assert backend.postcondition_holds(task, None, kept) == [Verdict.FALSE] * len(kept)
    # the offline "drop-all" flawed spec accepts everything and is reported as vacuous
    drop_all = next(s["id"] for s in artifact["specs"] if s["origin"] == "offline:drop-all")
    assert drop_all in data["vacuous_specs"]
    # deterministic: the same artifact and result again
    again = generate_adversaries(task, OfflineProvider(seed=1), backend, None)
    assert again == artifact
    assert synthesize_unexpected(task, pairs, again, backend,
                                 {"check_flawed_specs": True}) == data


def test_an_answer_rejected_for_each_spec_is_listed_once(task, backend):
    """The red team is asked once per flawed spec; the same unusable answer (a cached
    one) rejected each time is one entry in ``rejected``, not one per spec."""
    from veriscale.llm.results import AdversaryResult

    class Repeating(OfflineProvider):
        def adversaries(self, task, spec, n=None):  # type: ignore[override]
            got = super().adversaries(task, spec, n)
            return AdversaryResult(implementations=got.implementations, issues=got.issues,
                                   rejected=["chunk 1: no function named F"])

    artifact = generate_adversaries(task, Repeating(seed=1), backend, None)
    assert artifact["counts"]["specs_compiled"] >= 2
    assert artifact["rejected"] == ["chunk 1: no function named F"]
