"""Multi-step mutation of inputs: budget, distinctness, determinism, ingredient pool."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from collections import Counter

from veriscale.benchmark.model import Signature
from veriscale.expansion.mutation import (
    IngredientPool,
    MutationConfig,
    Mutator,
    mutate_inputs,
    mutate_inputs_traced,
    task_seed,
)
from veriscale.values import FLOAT, INT, NAT, STRING, ListT, Some, parse_type

SIG = Signature.from_json(
    {
        "name": "f",
        "parameters": [
            {"param_name": "xs", "param_type": "List Int"},
            {"param_name": "k", "param_type": "Nat"},
            {"param_name": "s", "param_type": "String"},
        ],
        "return_type": "Int",
    }
)
SEEDS = [((1, 2, 3), 2, "ab"), ((), 0, ""), ((5, 5), 7, "x y")]


def test_budget_distinct_and_new() -> None:
    run = mutate_inputs_traced(SIG, SEEDS, MutationConfig())
    per_seed = Counter(m.seed_index for m in run.mutants)
    assert per_seed == {0: 15, 1: 15, 2: 15}
    inputs = [m.input for m in run.mutants]
    assert len(set(inputs)) == len(inputs)
    assert not set(inputs) & set(SEEDS)
    assert {len(m.steps) for m in run.mutants} == {1, 2, 3, 4, 5}
    params = Counter(i for m in run.mutants for i, _ in m.steps)
    assert set(params) == {0, 1, 2}


def test_steps_replay_to_the_mutant() -> None:
    """The trace is exact: replaying the recorded steps gives the mutant."""
    run = mutate_inputs_traced(SIG, SEEDS, MutationConfig(ingredient_prob=0.0))
    types = [p.type for p in SIG.params]
    for m in run.mutants:
        current = list(SEEDS[m.seed_index])
        for i, step in m.steps:
            current[i] = Mutator(types[i]).schemas.apply(current[i], step)
        assert tuple(current) == m.input


def test_single_step_config() -> None:
    run = mutate_inputs_traced(SIG, SEEDS, MutationConfig(multi_step_size=1))
    assert all(len(m.steps) == 1 for m in run.mutants)


def test_attempts_are_capped_when_few_mutants_exist() -> None:
    run = mutate_inputs_traced((parse_type("Bool"),), [(True,)], MutationConfig())
    assert [m.input for m in run.mutants] == [(False,)]
    assert run.attempts == 4 * 15


def test_ill_typed_seeds_are_skipped_and_reported() -> None:
    run = mutate_inputs_traced((NAT,), [(-1,), (3,), ("x",), (1, 2)], MutationConfig())
    assert [i for i, _ in run.skipped_seeds] == [0, 2, 3]
    assert "negative" in run.skipped_seeds[0][1]
    assert {m.seed_index for m in run.mutants} == {1}


def test_zero_budget_and_no_params() -> None:
    assert mutate_inputs(SIG, SEEDS, MutationConfig(max_mutations_per_input=0)) == []
    assert mutate_inputs((), [()], MutationConfig()) == []


def test_same_seed_same_mutants_other_seed_differs() -> None:
    a = mutate_inputs(SIG, SEEDS, MutationConfig(seed=7))
    b = mutate_inputs(SIG, SEEDS, MutationConfig(seed=7))
    c = mutate_inputs(SIG, SEEDS, MutationConfig(seed=8))
    assert a == b
    assert a != c


def test_float_signed_zero_is_a_distinct_mutant() -> None:
    out = mutate_inputs((FLOAT,), [(0.0,)], MutationConfig(max_mutations_per_input=40))
    assert any(v == 0.0 and math.copysign(1.0, v) < 0 for (v,) in out)


_SCRIPT = """
import json
from veriscale.expansion.mutation import MutationConfig, mutate_inputs
from veriscale.values import parse_type
types = tuple(parse_type(t) for t in ("String", "Char", "List Char", "List String"))
seeds = [("hello world", "a", ("x", "y"), ("p", "q r")), ("", "\\n", (), ())]
out = mutate_inputs(types, seeds, MutationConfig(seed=3))
print(json.dumps([repr(m) for m in out]))
"""


def test_independent_of_pythonhashseed() -> None:
    outputs = []
    for hash_seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run(
            [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True
        )
        outputs.append(json.loads(proc.stdout))
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == 30


def test_ingredient_reuse_rate_matches_probability() -> None:
    pool = IngredientPool()
    pool.add(INT, 100)
    pool.add(INT, 200)
    rng = random.Random(11)
    m = Mutator(INT, ingredient_prob=0.3)
    steps = Counter(m.mutate_traced(5, rng, pool)[1].schema for _ in range(10_000))
    assert abs(steps["ingredient"] / 10_000 - 0.3) < 0.02
    # an empty pool for the type never yields an ingredient
    empty = IngredientPool()
    empty.add(STRING, "only strings")
    assert all(m.mutate_traced(5, rng, empty)[1].schema != "ingredient" for _ in range(500))


def test_pool_is_indexed_by_lean_type_in_insertion_order() -> None:
    pool = IngredientPool()
    pool.add(ListT(INT), (3, 1, 3))
    pool.add(parse_type("List (Nat × String)"), ((2, "b"), (0, "a")))
    pool.add(parse_type("Option Int"), None)
    pool.add(parse_type("Option Int"), Some(9))
    assert list(pool.values(INT)) == [3, 1, 9]
    assert list(pool.values(NAT)) == [2, 0]
    assert list(pool.values(STRING)) == ["b", "a"]
    assert list(pool.values(parse_type("Array Int"))) == [(3, 1, 3)]  # List/Array share
    assert list(pool.values(parse_type("Char"))) == []  # strings do not feed Char


def test_ingredient_share_in_a_run() -> None:
    run = mutate_inputs_traced((INT, INT), [(1000, -7)], MutationConfig(max_mutations_per_input=200))
    steps = [s for m in run.mutants for _, s in m.steps]
    share = sum(s.schema == "ingredient" for s in steps) / len(steps)
    assert 0.2 < share < 0.4


def test_values_cross_parameters_through_the_pool() -> None:
    # xs's elements feed the Int pool that k draws from
    run = mutate_inputs_traced((ListT(INT), INT), [((1000, 2000), -7)], MutationConfig())
    assert any(m.input[1] in (1000, 2000) for m in run.mutants)


def test_mutants_feed_the_pool() -> None:
    """Without feeding, an Int changed only by ingredient steps would stay 0."""
    cfg = MutationConfig(max_mutations_per_input=60, ingredient_prob=0.6)
    run = mutate_inputs_traced((INT, STRING), [(0, "a")], cfg)
    fed = [
        m for m in run.mutants
        if m.input[0] != 0
        and all(s.schema == "ingredient" for i, s in m.steps if i == 0)
        and any(i == 0 for i, _ in m.steps)
    ]
    assert fed


def test_task_seed_is_stable() -> None:
    assert task_seed(42, "verina_basic_1") == task_seed(42, "verina_basic_1")
    assert task_seed(42, "verina_basic_1") != task_seed(42, "verina_basic_2")
    assert 0 <= task_seed(42, "x") < 2**64
