"""Offline seed generation: boundary values, budget, own inputs first, determinism."""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from veriscale.benchmark.model import ExpectedPair, Signature, Task
from veriscale.benchmark.verina import notation
from veriscale.expansion.mutation import MutationConfig, mutate_inputs
from veriscale.values import (
    CHAR,
    FLOAT,
    INT,
    NAT,
    STRING,
    UINT8,
    OpaqueValue,
    Some,
    check,
    parse_type,
)
from veriscale.values.boundaries import LONG, boundary_values, offline_seeds, own_inputs
from veriscale.values.inputs import check_input, input_key
from veriscale.values.strategies import types_strategy


def _task(params: list[tuple[str, str]], tests=(), rejects=()) -> Task:
    sig = Signature.from_json(
        {
            "name": "f",
            "parameters": [{"param_name": n, "param_type": t} for n, t in params],
            "return_type": "Bool",
        }
    )
    return Task("t", "", sig, [ExpectedPair(i, True) for i in tests], list(rejects))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(types_strategy(max_leaves=3))
def test_boundary_values_are_canonical_and_distinct(t) -> None:
    values = boundary_values(t)
    assert values
    for v in values:
        assert check(t, v) is None, (str(t), v)
        notation.render(t, v)
    keys = [input_key((t,))((v,)) for v in values]
    assert len(set(keys)) == len(keys)


def test_scalar_boundaries() -> None:
    ints = boundary_values(INT)
    assert {0, 1, -1} <= set(ints)
    assert max(ints) > 2**63 and min(ints) < -(2**63)
    assert min(boundary_values(NAT)) == 0 and max(boundary_values(NAT)) > 2**64
    assert set(boundary_values(UINT8)) >= {0, 255}
    strings = boundary_values(STRING)
    assert "" in strings
    for c in (" ", '"', "\\", "\n", "\t"):
        assert any(c in s for s in strings), c
    assert any(any(ord(c) > 127 for c in s) for s in strings)
    assert any(len(s) >= 50 for s in strings)
    chars = boundary_values(CHAR)
    assert all(len(c) == 1 for c in chars)
    assert {" ", "'", '"', "\\", "\n"} <= set(chars)
    floats = boundary_values(FLOAT)
    assert any(f == 0.0 and math.copysign(1.0, f) < 0 for f in floats)
    assert math.inf in floats and not any(math.isnan(f) for f in floats)
    assert any(math.isnan(f) for f in boundary_values(FLOAT, allow_nan=True))


def test_sequence_boundaries() -> None:
    lists = boundary_values(parse_type("List Int"))
    assert () in lists
    assert any(len(v) == 1 for v in lists)
    assert any(len(v) >= 2 and len(set(v)) < len(v) for v in lists)  # duplicates
    assert any(len(v) >= 3 and list(v) == sorted(v) and len(set(v)) == len(v) for v in lists)
    assert any(len(v) >= 3 and list(v) == sorted(v, reverse=True) for v in lists)
    assert any(len(v) >= 3 and len(set(v)) == 1 for v in lists)  # all equal
    assert any(len(v) >= 50 for v in lists)
    assert any(any(abs(x) > 2**63 for x in v) for v in lists)
    assert max(len(v) for v in lists) == LONG
    options = boundary_values(parse_type("Option Nat"))
    assert options[0] is None and Some(0) in options
    pairs = boundary_values(parse_type("Nat × Nat"))
    assert (0, 1) in pairs and (1, 0) in pairs and (0, 0) in pairs


def test_offline_seeds_own_inputs_first_then_budget() -> None:
    tests = [((1, 2), 1), ((1, 2), 1), ((), 0)]
    rejects = [((5,), 9), ((), 0)]
    task = _task([("xs", "Array Int"), ("k", "Nat")], tests, rejects)
    out = offline_seeds(task, budget=25, seed=1)
    assert out[:3] == [((1, 2), 1), ((), 0), ((5,), 9)]
    assert own_inputs(task) == out[:3]
    assert len(out) == 3 + 25
    assert len(set(out)) == len(out)
    types = [p.type for p in task.signature.params]
    assert all(check_input(types, inp) is None for inp in out)
    # the diagonal comes first: both parameters at their first boundary
    assert ((0,), 1) in out or ((), 0) in out


def test_offline_seeds_deterministic() -> None:
    task = _task([("s", "String"), ("c", "Char"), ("n", "Int")])
    assert offline_seeds(task, 40, seed=3) == offline_seeds(task, 40, seed=3)
    assert offline_seeds(task, 40, seed=3) != offline_seeds(task, 40, seed=4)
    assert len(offline_seeds(task, 40, seed=3)) == 40


def test_single_parameter_is_bounded_by_its_boundaries() -> None:
    task = _task([("b", "Bool")])
    assert offline_seeds(task, 40) == [(False,), (True,)]


def test_opaque_parameters_use_only_seen_values() -> None:
    f = OpaqueValue("fun x => x > 0")
    task = _task([("a", "Array Int"), ("p", "Int -> Bool")], tests=[((1,), f)])
    out = offline_seeds(task, 20)
    assert {inp[1] for inp in out} == {f}
    assert len(out) == 21
    assert offline_seeds(_task([("p", "Int -> Bool")]), 20) == []


def _load_verina(root: Path) -> list[Task]:
    tasks = []
    for d in sorted(root.iterdir()):
        if not (d / "task.json").is_file():
            continue
        sig = Signature.from_json(json.loads((d / "task.json").read_text())["signature"])
        tests, rejects = [], []
        for case in json.loads((d / "test.json").read_text()):
            with contextlib.suppress(ValueError):
                tests.append(ExpectedPair(sig.decode_input(case["input"]), None))
        for case in json.loads((d / "reject_inputs.json").read_text()):
            with contextlib.suppress(ValueError):
                rejects.append(sig.decode_input(case["input"]))
        tasks.append(Task(d.name, "", sig, tests, rejects))
    return tasks


def test_every_verina_task_seeds_and_mutants_are_well_typed(verina_dir: Path) -> None:
    tasks = _load_verina(verina_dir)
    assert len(tasks) >= 180
    for task in tasks:
        types = [p.type for p in task.signature.params]
        seeds = offline_seeds(task, 40, seed=0)
        assert len(seeds) <= 40 + len(task.tests) + len(task.reject_inputs)
        mutants = mutate_inputs(task.signature, seeds, MutationConfig(max_mutations_per_input=5))
        for inp in seeds + mutants:
            assert check_input(types, inp) is None, task.id
            task.signature.encode_input(inp)
