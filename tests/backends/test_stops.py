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


def test_a_run_directory_keeps_its_stops_across_processes(tmp_path) -> None:
    """A resumed run does not pay its stops again: the memory is written through to the
    run's oracle cache (a real SQLite file) and read back by a new memory, under its
    namespace only; tuples come back as tuples, the smallest stop wins."""
    from veriscale.backends.cache import OracleCache

    cache = OracleCache(tmp_path / "oracle.sqlite")
    first: StopMemory[tuple[bool, str]] = StopMemory()
    first.keep_in(cache, "lean|compiled")
    first.remember(("task", "spec", ""), 40, (True, "timeout"))
    first.remember(("task", "spec", ""), 30, (False, "infrastructure: crash"))
    first.remember(("task", "spec", ""), 50, (True, "larger: not kept"))
    cache.close()
    cache = OracleCache(tmp_path / "oracle.sqlite")
    again: StopMemory[tuple[bool, str]] = StopMemory()
    again.keep_in(cache, "lean|compiled")
    assert again.covering(("task", "spec", ""), 35) == (False, "infrastructure: crash")
    assert again.covering(("task", "spec", ""), 29) is None
    other: StopMemory[tuple[bool, str]] = StopMemory()
    other.keep_in(cache, "lean|kernel")  # another oracle's limits: not its stops
    assert not other and other.covering(("task", "spec", ""), 99) is None
