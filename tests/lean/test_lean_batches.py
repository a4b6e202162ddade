"""Batched compiled evaluation: which checks share an ``#eval!``, and how its answer
is split back into the answers single checks would have printed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from veriscale.backends.lean import batching
from veriscale.backends.lean.messages import batch_answers
from veriscale.backends.lean.process import LeanMessage
from veriscale.benchmark.verina import notation
from veriscale.values import ListT, OptionT, ProdT, Scalar

PROBE = "set_option maxHeartbeats 2000 in "


def test_batch_keys_group_one_function_and_one_kind() -> None:
    assert batching.batch_key(PROBE + "#eval! decide (F_precond 1)") == (2000, "decide", "F_precond")
    assert batching.batch_key("#eval! ((F 4 (by sorry)) == (8))") == (0, "==", "F")
    assert batching.batch_key("#eval! (F 4 (by sorry))") == (0, "value", "F")
    assert batching.batch_key(PROBE + "#check (F_precond 1)") == (2000, "check", "F_precond")
    assert batching.batch_key("#reduce decide (F_precond 1)") is None  # kernel mode
    assert batching.batch_key("#eval! decide (P\n)") is None


def test_a_batch_puts_one_term_on_each_line_under_the_summed_budget() -> None:
    text, offset = batching.batch_command([PROBE + "#eval! decide (F_precond 1)",
                                         PROBE + "#eval! decide (F_precond (-2))"])
    lines = text.split("\n")
    assert lines[0] == "set_option maxHeartbeats 4000 in" and lines[1] == "#eval! ["
    assert lines[offset:] == ["  decide (F_precond 1),", "  decide (F_precond (-2))]"]
    text, offset = batching.batch_command(["#eval! (F 1)", "#eval! (F 2)"])
    assert offset == 1 and text == "#eval! [\n  (F 1),\n  (F 2)]"
    text, offset = batching.batch_command(["#check (F_precond 1)", "#check (F_precond 2)"])
    assert offset == 1 and text == "example : List Prop := [\n  (F_precond 1),\n  (F_precond 2)]"


_SCALARS = st.one_of(
    st.tuples(st.just(Scalar("Int")), st.integers(-10**30, 10**30)),
    st.tuples(st.just(Scalar("String")), st.text(max_size=8)),
    st.tuples(st.just(Scalar("Char")), st.characters(exclude_categories=("Cs",))),
    st.tuples(st.just(Scalar("Bool")), st.booleans()),
)


@st.composite
def _typed_values(draw: st.DrawFn) -> tuple[object, object]:
    t, v = draw(_SCALARS)
    shape = draw(st.sampled_from(["plain", "list", "option", "pair"]))
    if shape == "list":
        vs = draw(st.lists(_SCALARS.filter(lambda p: p[0] == t).map(lambda p: p[1]),
                           max_size=3))
        return ListT(t), tuple(vs)
    if shape == "option":
        return OptionT(t), draw(st.sampled_from([None, "some"])) and notation.parse(
            OptionT(t), f"some ({notation.render(t, v)})")
    if shape == "pair":
        return ProdT(t, t), (v, v)
    return t, v


@given(st.lists(_typed_values(), min_size=1, max_size=6))
def test_a_printed_list_splits_into_the_elements_printed_alone(items: list) -> None:
    texts = [notation.render(t, v) for t, v in items]
    assert batching.split_list("[" + ", ".join(texts) + "]") == texts


def test_split_list_refuses_what_is_not_one_list() -> None:
    for text in ("1, 2", "[1, 2", "[(1, 2]", '["a]', "[1,, 2]", "[1] [2]"):
        assert batching.split_list(text) is None, text
    assert batching.split_list("[]") == []


def _msg(line: int, text: str, severity: str = "information") -> LeanMessage:
    return LeanMessage(severity, line, 0, line, 1, text)


def test_batch_answers_read_results_errors_and_failures() -> None:
    got = batch_answers([_msg(10, "[true, false]")], 11, 2)
    assert [a[0].text for a in got] == ["true", "false"]  # type: ignore[index]
    # a term's own elaboration error is its answer; the others are asked again in a batch
    err = _msg(12, "failed to synthesize\n  Decidable (P 2)", "error")
    assert batch_answers([err], 11, 3) == [(), (err,), ()]
    # an error outside the terms (the budget), a panic, a short list: each asked alone
    assert batch_answers([_msg(10, "maximum number of heartbeats", "error")], 11, 2) == [None] * 2
    assert batch_answers([_msg(10, "PANIC at f"), _msg(10, "[0, 1]")], 11, 2) == [None] * 2
    assert batch_answers([_msg(10, "[0]")], 11, 2) == [None] * 2
    assert batch_answers([], 11, 2) == [None] * 2  # nothing printed (a crash)
    # a #check term without an error of its own elaborated, whatever the others did
    got = batch_answers([err], 11, 3, checked=True)
    assert got[1] == (err,) and got[0] == got[2] and got[0][0].severity == "information"
    assert all(batch_answers([], 11, 2, checked=True))  # silent: it elaborated
    # a warning (a ``sorry`` in the proof argument) changes nothing
    got = batch_answers([_msg(10, "declaration uses 'sorry'", "warning"), _msg(10, "[1, 2]")],
                         11, 2)
    assert [a[0].text for a in got] == ["1", "2"]  # type: ignore[index]


def test_a_batch_through_a_helper_calls_it_with_each_checks_literals() -> None:
    from veriscale.benchmark.model import Signature

    sig = Signature.from_json({"name": "F", "parameters": [
        {"param_name": "xs", "param_type": "List Int"}, {"param_name": "k", "param_type": "Nat"}],
        "return_type": "Option Int"})
    post = [PROBE + "#eval! decide (F_postcond [1, -2] 3 (some (-2)) (by sorry))",
            PROBE + "#eval! decide (F_postcond [] 0 none (by sorry))"]
    text, offset, as_data = batching.helper_batch(post, 400000, sig, 2)
    assert not as_data
    lines = text.split("\n")
    assert lines[:offset] == [
        "def «vs batch 2» (xs : List Int) (k : Nat) (vsOutput : Option Int) : Bool :=",
        "  decide (F_postcond (xs) (k) vsOutput sorry)",
        "set_option maxHeartbeats 4000 in", "#eval! ["]
    assert lines[offset:] == ["  «vs batch 2» [1, -2] 3 (some (-2)),",
                              "  «vs batch 2» [] 0 none]"]
    text, offset, _ = batching.helper_batch(["#eval! decide (F_precond [1] 2)"], 0, sig)
    assert text.split("\n")[:2] == ["def «vs batch 0» (xs : List Int) (k : Nat) : Bool :=",
                                    "  decide (F_precond (xs) (k))"]
    assert text.split("\n")[offset] == "  «vs batch 0» [1] 2]"
    assert batching.helper_batch(["#eval! ((F [1] 2 (by sorry)) == (some 1))",  # two bodies
                                "#eval! ((F [] 2) == (none))"], 0, sig) is None
    text, _, _ = batching.helper_batch(["#eval! ((F [1] 2 (by sorry)) == (some 1))"], 0, sig)
    assert text.split("\n")[:2] == [
        "def «vs batch 0» (xs : List Int) (k : Nat) (vsOutput : Option Int) : Bool :=",
        "  (F (xs) (k) sorry) == vsOutput"] and text.endswith("«vs batch 0» [1] 2 (some 1)]")
    text, _, _ = batching.helper_batch(["#eval! (F [1] 2 (by sorry))"], 0, sig)
    assert text.split("\n")[:2] == ["def «vs batch 0» (xs : List Int) (k : Nat) : Option Int :=",
                                    "  F (xs) (k) sorry"]
    # shapes it does not know are left to the plain batch
    assert batching.helper_batch(["#check (F_precond [1] 2)"], 0, sig) is None
    assert batching.helper_batch(["#eval! decide (G_precond [1] 2)"], 0, sig) is None
    assert batching.helper_batch(["#eval! ((F 1 (by sorry)) == (\") == (\"))"], 0, sig) is None


def _decoded(t: object, j: object) -> object:
    """What the file's decoder (data.PRELUDE) reads ``j`` as, instance by instance."""
    from veriscale.values import ArrayT, Some

    if isinstance(t, Scalar):
        if t.name == "Char":
            assert isinstance(j, int) and not 0xD800 <= j <= 0xDFFF and j < 0x110000
            return chr(j)
        assert isinstance(j, {"Int": int, "Nat": int, "Bool": bool, "String": str}[t.name])
        return j
    if isinstance(t, (ListT, ArrayT)):
        return tuple(_decoded(t.elem, x) for x in j)  # type: ignore[union-attr]
    if isinstance(t, OptionT):
        assert isinstance(j, list) and len(j) <= 1
        return Some(_decoded(t.elem, j[0])) if j else None
    assert isinstance(t, ProdT) and isinstance(j, list) and len(j) == 2
    return (_decoded(t.fst, j[0]), _decoded(t.snd, j[1]))


@given(st.lists(_typed_values(), min_size=1, max_size=4))
def test_values_as_data_read_back_as_the_literals_denote(items: list) -> None:
    """A batch's values as data: its arguments' text (as the renderer wrote them) read
    back exactly, and the JSON row decoded, instance by instance, to the same values."""
    import json

    from veriscale.backends.lean import data
    from veriscale.benchmark.verina import notation

    types = [t for t, _ in items]
    values = [v for _, v in items]
    assert notation.parse_args(types, " ".join(notation.render(t, v) for t, v in items)) == values
    row = json.loads(json.dumps(data.row(types, values)))
    for k, (t, v) in enumerate(items):  # the nested pair's k-th value
        j = row
        for _ in range(k):
            j = j[1]
        if k < len(items) - 1:
            j = j[0]
        assert _decoded(t, j) == v
    assert data.row_type(types) is not None


def test_a_batch_of_values_as_data_maps_its_helper_over_one_string() -> None:
    from veriscale.benchmark.model import Signature

    sig = Signature.from_json({"name": "F", "parameters": [
        {"param_name": "xs", "param_type": "List Int"}, {"param_name": "c", "param_type": "Char"}],
        "return_type": "Option (Nat × String)"})
    post = [PROBE + "#eval! decide (F_postcond [1, -2] 'x' (some (3, \"a\\\"\")) (by sorry))",
            PROBE + "#eval! decide (F_postcond [] '\\n' none (by sorry))"]
    text, offset, as_data = batching.helper_batch(post, 400000, sig, 1, data=True)
    assert as_data
    lines = text.split("\n")
    assert lines[offset - 1:] == [
        "set_option maxHeartbeats 4000 in",
        "#eval! (_root_.List.map (fun vsRow => «vs batch 1» vsRow.1 vsRow.2.1 vsRow.2.2)",
        "  (_root_.VeriScaleData.rows (_root_.Prod (_root_.List _root_.Int) (_root_.Prod "
        "_root_.Char (_root_.Option (_root_.Prod _root_.Nat _root_.String)))) "
        '"[[[1,-2],[120,[[3,\\"a\\\\\\"\\"]]]],[[],[10,[]]]]"))']
    # a type without a route, or a value the route refuses, keeps the literals
    floats = Signature.from_json({"name": "F", "parameters": [
        {"param_name": "x", "param_type": "Float"}], "return_type": "Bool"})
    _, _, as_data = batching.helper_batch(["#eval! decide (F_precond 1.5)"], 0, floats, data=True)
    assert not as_data
    strings = Signature.from_json({"name": "F", "parameters": [
        {"param_name": "s", "param_type": "String"}], "return_type": "Bool"})
    _, _, as_data = batching.helper_batch(['#eval! decide (F_precond "\\ud800")'], 0, strings,
                                        data=True)
    assert not as_data
