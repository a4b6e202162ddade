"""The records' neutral value form: every value survives it through strict JSON, it
names no language, and a version-2 record (VERINA's encoding) upgrades to it."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings

from veriscale import artifacts
from veriscale.benchmark.model import Signature
from veriscale.benchmark.verina.codec import encode
from veriscale.values import (
    FLOAT,
    INT,
    ListT,
    OptionT,
    ProdT,
    Some,
    parse_type,
    record,
)
from veriscale.values.strategies import same_value, typed_values
from veriscale.values.value import IllTyped

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(typed_values())
def test_every_value_survives_strict_json(tv):
    t, v = tv
    text = json.dumps(record.dump(t, v), allow_nan=False)  # strict JSON: no NaN literal
    assert same_value(record.load(t, json.loads(text)), v)


def test_the_form_is_plain_json_not_a_language() -> None:
    assert record.dump(parse_type("Array (List Int)"), ((1, -2), ())) == [[1, -2], []]
    assert record.dump(ProdT(INT, parse_type("String")), (3, 'a"b')) == [3, 'a"b']
    nested = OptionT(OptionT(INT))
    assert record.dump(nested, Some(None)) == {"some": None}
    assert record.dump(nested, None) is None
    assert record.dump(FLOAT, math.inf) == {"float": "inf"}
    assert math.isnan(record.load(FLOAT, {"float": "nan"}))


@pytest.mark.parametrize(("t", "raw"), [
    (INT, True), (INT, 1.5), (parse_type("Nat"), -1), (ListT(INT), "[1, 2]"),
    (OptionT(INT), 3), (ProdT(INT, INT), [1]), (parse_type("Char"), "ab"),
])
def test_a_value_of_the_wrong_shape_is_refused(t, raw) -> None:
    with pytest.raises(IllTyped):
        record.load(t, raw)


SIG = Signature.from_json({"name": "f", "parameters": [
    {"param_name": "xs", "param_type": "Array Int"}, {"param_name": "c", "param_type": "Char"}],
    "return_type": "Option (List Int)"})


def test_a_version_2_record_upgrades_in_place(tmp_path) -> None:
    from veriscale.rundir import RunDir

    inp, out, other = ((1, 2), "x"), Some((2,)), None
    v2 = {"pairs": [{"input": SIG.encode_input(inp), "expected": SIG.encode_output(out),
                     "provenance": "seed"}],
          "gt_rejected": [{"input": SIG.encode_input(inp), "reference": encode(SIG.return_type,
                                                                               other)}],
          "counts": {"pairs": 1}}
    assert v2["pairs"][0]["input"] == {"xs": "#[1, 2]", "c": "x"}  # VERINA's Lean text
    rd = RunDir(tmp_path)
    path = rd.artifact_path("t", "outputs")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"stage": "outputs", "task": "t", "version": 2,
                                "fingerprint": "fp", "data": v2}))
    assert rd.load_artifact("t", "outputs", "fp") is None  # no signature: not read
    got = rd.load_artifact("t", "outputs", "fp", SIG)
    assert got is not None and got.pairs[0]["input"] == {"xs": [1, 2], "c": "x"}
    assert SIG.load_output(got.pairs[0]["expected"]) == out
    assert SIG.load_output(got.gt_rejected[0]["reference"]) is None
    saved = json.loads(path.read_text())
    assert saved["version"] == artifacts.SCHEMA_VERSION and saved["fingerprint"] == "fp"
    assert rd.load_artifact("t", "outputs", "fp") is not None  # now read by anyone


def test_an_unreadable_version_2_record_is_recomputed(tmp_path) -> None:
    data = {"pairs": [{"input": {"xs": "#[1, ", "c": "x"}, "expected": "none",
                       "provenance": "seed"}]}
    assert artifacts.upgrade("outputs", data, 2, SIG) is None
    assert artifacts.upgrade("outputs", {"pairs": []}, 1, SIG) is None
