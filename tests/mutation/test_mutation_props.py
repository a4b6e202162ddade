"""Property tests: every mutant of every type is a canonical value of that type."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veriscale.benchmark.verina import notation
from veriscale.benchmark.verina.codec import decode, encode
from veriscale.expansion.mutation import (
    IngredientPool,
    MutationConfig,
    Mutator,
    mutate_inputs_traced,
)
from veriscale.values import CHAR, NAT, UINT8, check, leaves
from veriscale.values.inputs import check_input, input_key
from veriscale.values.strategies import same_value, typed_values, types_strategy, values_of

SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _assert_canonical(t, m) -> None:
    assert check(t, m) is None, (str(t), m)
    assert same_value(notation.parse(t, notation.render(t, m)), m), (str(t), m)
    assert same_value(decode(t, encode(t, m)), m), (str(t), m)


@SETTINGS
@given(typed_values(max_leaves=4), st.integers(0, 2**32), st.booleans())
def test_chained_mutants_stay_well_typed(tv, seed, allow_nan) -> None:
    t, v = tv
    rng = random.Random(seed)
    pool = IngredientPool()
    pool.add(t, v)
    mutator = Mutator(t, ingredient_prob=0.3, allow_nan=allow_nan)
    current = v
    for _ in range(25):
        current, step = mutator.mutate_traced(current, rng, pool)
        _assert_canonical(t, current)
        pool.add(t, current)
        assert step.schema in (*mutator.schemas.names, "ingredient", "identity")


@SETTINGS
@given(typed_values(max_leaves=3), st.integers(0, 2**32))
def test_range_invariants_of_nat_char_uint8(tv, seed) -> None:
    t, v = tv
    rng = random.Random(seed)
    mutator = Mutator(t, ingredient_prob=0.0)
    for _ in range(30):
        v = mutator.mutate(v, rng)
        for leaf_t, leaf in leaves(t, v):
            if leaf_t == NAT:
                assert leaf >= 0
            elif leaf_t == CHAR:
                assert isinstance(leaf, str) and len(leaf) == 1
            elif leaf_t == UINT8:
                assert 0 <= leaf <= 255


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(types_strategy(max_leaves=3), min_size=1, max_size=3).flatmap(
        lambda ts: st.tuples(
            st.just(tuple(ts)),
            st.lists(st.tuples(*(values_of(t, allow_nan=False) for t in ts)), max_size=3),
        )
    ),
    st.integers(0, 1000),
)
def test_mutate_inputs_distinct_and_well_typed(sig_seeds, seed) -> None:
    types, seeds = sig_seeds
    cfg = MutationConfig(max_mutations_per_input=6, seed=seed)
    run = mutate_inputs_traced(types, seeds, cfg)
    assert run.skipped_seeds == []
    key = input_key(types)  # tells -0.0 from 0.0, as the driver does
    keys = [key(m.input) for m in run.mutants]
    assert len(set(keys)) == len(keys)
    assert not set(keys) & {key(s) for s in seeds}
    per_seed: dict[int, int] = {}
    for m in run.mutants:
        assert check_input(types, m.input) is None
        assert 1 <= len(m.steps) <= cfg.multi_step_size
        per_seed[m.seed_index] = per_seed.get(m.seed_index, 0) + 1
    assert all(n <= 6 for n in per_seed.values())
