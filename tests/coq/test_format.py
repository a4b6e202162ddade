"""The Coq task format and literal codec, on VERINA's Coq track when it is present."""

from __future__ import annotations

import pytest
from coq_paths import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from veriscale.backends.coq import format as F
from veriscale.backends.coq.literal import coq_char, nat_magnitude, parse_coq, to_coq
from veriscale.backends.coq.types import coq_type, parse_coq_type
from veriscale.backends.datasets import detect_format, load_benchmark
from veriscale.values import BOOL, CHAR, INT, NAT, STRING, ListT, OpaqueValue, OptionT, ProdT, Some
from veriscale.values.value import IllTyped, Unparsable

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} is absent")


@pytest.mark.parametrize(("text", "neutral"), [
    ("Z", INT), ("nat", NAT), ("(list Z)", ListT(INT)), ("list (ascii * nat)", ListT(ProdT(CHAR, NAT))),
    ("(Z  * nat)", ProdT(INT, NAT)), ("(option (nat  * nat))", OptionT(ProdT(NAT, NAT))),
    ("Z * Z * nat", ProdT(ProdT(INT, INT), NAT)), ("(list Z * bool)", ProdT(ListT(INT), BOOL)),
])
def test_coq_types_map_to_neutral_types(text, neutral):
    assert parse_coq_type(text) == neutral
    assert parse_coq_type(coq_type(neutral)) == neutral


def test_opaque_types_keep_their_text():
    assert str(parse_coq_type("(Z -> bool)")) == "Z -> bool"
    assert str(parse_coq_type("R")) == "R"


@pytest.mark.parametrize(("t", "text", "value"), [
    (INT, "(-5)%Z", -5), (INT, "-10", -10), (NAT, "2%nat", 2), (NAT, "(7)%nat", 7),
    (ListT(NAT), "[2%nat; 3%nat]", (2, 3)), (ListT(ProdT(NAT, NAT)), "[(2%nat, 1%nat)]", ((2, 1),)),
    (STRING, '"a""b"%string', 'a"b'), (CHAR, '"010"%char', "\n"), (CHAR, '""""%char', '"'),
    (STRING, 'String "010" (String "000" "x")', "\n\x00x"), (OptionT(INT), "Some (-1)", Some(-1)),
    (OptionT(CHAR), '(Some "a"%char)', Some("a")), (ProdT(ProdT(INT, INT), INT), "(1, -2, 3)", ((1, -2), 3)),
    (ProdT(INT, ProdT(INT, INT)), "(1, (2, 3))", (1, (2, 3))), (ListT(INT), "[]", ()),
    (ListT(ProdT(CHAR, NAT)), '[(("x"%char), 1%nat)]', (("x", 1),)),
])
def test_parse_literals_and_compute_output(t, text, value):
    assert parse_coq(t, text) == value


@pytest.mark.parametrize(("t", "text", "exc"), [
    (NAT, "-1%nat", IllTyped), (INT, "[1]", Unparsable), (NAT, "3%Z", Unparsable),
    (ListT(INT), "[1; 2", Unparsable), (CHAR, '"ab"%char', IllTyped),
    # how Compute prints bytes that are not UTF-8 (the bytes of "é" reversed)
    (STRING, 'String "169" (String "195" "")', Unparsable),
])
def test_bad_literals_are_refused(t, text, exc):
    with pytest.raises(exc):
        parse_coq(t, text)


def test_a_char_above_one_byte_cannot_be_rendered():
    with pytest.raises(IllTyped):
        coq_char("\u0101")


_chars = st.characters(max_codepoint=255, exclude_categories=("Cs",))
_strings = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
_types_values = st.one_of(
    st.tuples(st.just(INT), st.integers()),
    st.tuples(st.just(NAT), st.integers(min_value=0)),
    st.tuples(st.just(STRING), _strings),
    st.tuples(st.just(CHAR), _chars),
    st.tuples(st.just(ListT(ProdT(INT, NAT))),
              st.lists(st.tuples(st.integers(), st.integers(0, 99)), max_size=4).map(tuple)),
    st.tuples(st.just(OptionT(ListT(CHAR))),
              st.one_of(st.none(), st.lists(_chars, max_size=3).map(lambda x: Some(tuple(x))))),
    st.tuples(st.just(ProdT(ProdT(STRING, BOOL), INT)),
              st.tuples(st.tuples(_strings, st.booleans()), st.integers())),
)


@settings(max_examples=300, deadline=None)
@given(_types_values, st.booleans())
def test_render_then_parse_is_the_identity(tv, arg):
    t, v = tv
    assert parse_coq(t, to_coq(t, v, arg=arg)) == v


def test_nat_magnitude_finds_the_largest_nat():
    assert nat_magnitude(ListT(ProdT(INT, NAT)), ((10**9, 3), (1, 7))) == 7
    assert nat_magnitude(ProdT(INT, ListT(NAT)), (1, (5,))) == 5
    assert nat_magnitude(ListT(parse_coq_type("R")), (OpaqueValue("3%nat"),)) == 3


@needs_data
def test_every_task_loads_and_writes_back_byte_for_byte(tmp_path):
    tasks, issues = load_benchmark(DATA)
    assert len(tasks) == 189
    kinds = {(i.task, i.kind) for i in issues}
    assert kinds == {("verina_advanced_75", F.RAW_JSON_VALUE), ("verina_advanced_9", F.RAW_JSON_VALUE),
                     ("verina_basic_25", F.SIGNATURE_FROM_TASK_V)}
    for task in tasks:
        assert detect_format(task.path) == "coq"
        out = F.write_task_dir(task, tmp_path / task.id)
        assert (out / "task.v").read_bytes() == (task.path / "task.v").read_bytes(), task.id
        again, _ = F.load_task_dir(out)
        assert again is not None and again.signature == task.signature
        assert [(c.input, c.expected, c.unexpected) for c in again.tests] == \
            [(c.input, c.expected, c.unexpected) for c in task.tests]
        assert again.reject_inputs == task.reject_inputs


@needs_data
def test_raw_json_reject_inputs_are_read_by_type():
    task, issues = F.load_task_dir(DATA / "verina_advanced_9")
    assert task is not None and task.reject_inputs == [(1, 0)]
    assert all(i.kind == F.RAW_JSON_VALUE and i.file == "coq_reject_inputs.json" for i in issues)


@needs_data
def test_signature_is_taken_from_task_v_when_task_json_lacks_it():
    task, _ = F.load_task_dir(DATA / "verina_basic_25")
    assert task is not None and task.signature.name == "sumAndAverage"
    assert [p.type_text for p in task.signature.params] == ["nat"]
    assert str(task.signature.return_type) == "Int × R"


def test_changed_sections_render_the_template(tmp_path):
    sig = F.coq_signature({"name": "inc", "parameters": [{"param_name": "x", "param_type": "Z"}],
                           "return_type": "Z"})
    sections = F.parse_coq_sections(F.render_task_v(sig, F.CoqSections(code="x + 1",
                                                                        postcond="result =? x + 1")))
    assert sections.code.strip() == "x + 1" and sections.precond.strip() == "true"
    assert F.CoqSections().proof == "admit."


def test_coq_rows_share_the_codec_provenance_and_unreadable(tmp_path):
    """The Coq format reads and writes rows through benchmark.rows: provenance survives,
    and an unreadable test.json is never zero tests."""
    import shutil as _shutil

    from coq_paths import DATA

    from veriscale.backends.coq.format import load_task_dir, write_task_dir
    from veriscale.benchmark.model import ExpectedPair

    source = next((d for d in sorted(DATA.iterdir()) if (d / F.TEST_JSON).is_file()), None) \
        if DATA.is_dir() else None
    if source is None:
        pytest.skip("VERINA's Coq track is not present")
    task, _ = load_task_dir(source)
    assert task is not None and task.tests
    first = task.tests[0]
    task.tests = [first, ExpectedPair(first.input, first.expected, [], "mutation")]
    write_task_dir(task, tmp_path / task.id)
    again, _ = load_task_dir(tmp_path / task.id)
    assert [t.provenance for t in again.tests] == ["original", "mutation"]
    bad = tmp_path / "bad"
    _shutil.copytree(tmp_path / task.id, bad)
    (bad / F.TEST_JSON).write_text('{"not": "a list"}')
    broken, issues = load_task_dir(bad)
    assert broken.tests == [] and F.TEST_JSON in broken.unreadable
    assert any(i.file == F.TEST_JSON for i in issues)
