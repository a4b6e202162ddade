"""``veriscale mutate``."""

from __future__ import annotations

import json

from click.testing import CliRunner

from veriscale.benchmark.verina.codec import decode
from veriscale.cli import main
from veriscale.values import CHAR, STRING, check, parse_type


def _run(*args: str):
    return CliRunner().invoke(main, ["mutate", *args])


def test_lines_are_distinct_verina_values() -> None:
    res = _run("--type", "List Int", "--value", "[1,2,3]", "--n", "10", "--seed", "1")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert len(lines) == 10 and len(set(lines)) == 10
    t = parse_type("List Int")
    values = [decode(t, json.loads(line)) for line in lines]
    assert (1, 2, 3) not in values
    assert all(check(t, v) is None for v in values)


def test_json_output_and_lean_literal_value() -> None:
    res = _run("--type", "Array Nat", "--value", "#[0, 4]", "--n", "5", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert len(out) == 5
    t = parse_type("Array Nat")
    assert all(check(t, decode(t, v)) is None and v.startswith("#[") for v in out)


def test_same_seed_same_output() -> None:
    a = _run("--type", "String", "--value", "hello world", "--seed", "9").output
    b = _run("--type", "String", "--value", "hello world", "--seed", "9").output
    assert a == b and a


def test_char_raw_value_gives_single_chars() -> None:
    res = _run("--type", "Char", "--value", "a", "--n", "8", "--json")
    assert res.exit_code == 0, res.output
    chars = [decode(CHAR, v) for v in json.loads(res.output)]
    assert len(chars) == 8 and all(len(c) == 1 for c in chars)


def test_string_json_value() -> None:
    res = _run("--type", "String", "--value", '"ab"', "--n", "3", "--json", "--steps", "1")
    values = {decode(STRING, v) for v in json.loads(res.output)}
    assert values <= {"", "ba"} | {"ab" + c for c in ' "\'\\\n\té😀'}


def test_trace_and_steps() -> None:
    res = _run("--type", "Int", "--value", "5", "--steps", "1", "--trace", "--n", "4")
    assert res.exit_code == 0, res.output
    for line in res.output.splitlines():
        _value, steps = line.split("\t")
        assert steps.count(";") == 0 and steps.split("(")[0] in ("add", "mul", "ingredient")


def test_few_mutants_for_small_domains() -> None:
    res = _run("--type", "Bool", "--value", "true", "--n", "10")
    assert res.output.split() == ["false"]


def test_errors_exit_2() -> None:
    bad_type = _run("--type", "List (", "--value", "1")
    assert bad_type.exit_code == 2 and "--type" in bad_type.output
    bad_value = _run("--type", "Nat", "--value", "-3")
    assert bad_value.exit_code == 2 and "negative" in bad_value.output
    not_list = _run("--type", "List Int", "--value", "hello")
    assert not_list.exit_code == 2
    two_chars = _run("--type", "Char", "--value", "ab")
    assert two_chars.exit_code == 2


def test_opaque_type_is_left_unchanged() -> None:
    res = _run("--type", "Int -> Bool", "--value", "fun x => x > 1")
    assert res.exit_code == 0
    assert res.stdout == ""
