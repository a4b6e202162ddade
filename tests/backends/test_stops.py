"""StopMemory: the smallest check that stopped a prover, per key, decides what is skipped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from veriscale.backends.stops import StopMemory


@given(st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 50)), max_size=12),
       st.sampled_from("abc"), st.integers(0, 60))
def test_a_check_is_skipped_exactly_when_it_is_no_smaller_than_a_stop(
        stops: list[tuple[str, int]], key: str, size: int) -> None:
    memory: StopMemory[str] = StopMemory()
    for k, n in stops:
        memory.remember(k, n, f"{k}{n}")
    sizes = [n for k, n in stops if k == key]
    why = memory.covering(key, size)
    if sizes and size >= min(sizes):
        assert why == f"{key}{min(sizes)}"  # the smallest stop's reason
    else:
        assert why is None
    assert bool(memory) == bool(stops)
