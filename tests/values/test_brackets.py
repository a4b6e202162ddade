"""The one bracket scanner of every literal syntax."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from veriscale.values.brackets import balanced_end


def test_quotes_and_escapes_of_each_syntax() -> None:
    assert balanced_end("(a, [b]) c") == 8
    assert balanced_end('("x)" , 1)') == 10
    assert balanced_end("['\\'', ')']") == 11  # Lean/Python: a backslash escapes
    assert balanced_end('("a"")" ; 1)', doubled=True, quotes='"') == 12  # Coq: "" is a "
    assert balanced_end("(1, 2") == -1
    assert balanced_end("x (1)", 2) == 5


@st.composite
def nested(draw: st.DrawFn, depth: int = 3) -> str:
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(["1", "x", '"a)b"', "'('", '"q\\"]"']))
    opener, closer = draw(st.sampled_from(["()", "[]", "{}"]))
    parts = draw(st.lists(nested(depth - 1), max_size=3))
    return opener + ", ".join(parts) + closer


@given(nested(), st.text(alphabet="abc ,;", max_size=5))
def test_a_group_ends_where_it_closes_whatever_follows(group: str, tail: str) -> None:
    if group[0] in "([{":
        assert balanced_end(group + tail) == len(group)
        assert balanced_end(group[:-1]) == -1
