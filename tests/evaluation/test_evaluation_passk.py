"""pass@k: the unbiased estimator, checked against binomials and with Hypothesis."""

from __future__ import annotations

from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veriscale.evaluation.passk import mean_pass_at_k, pass_at_k


@st.composite
def nck(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 60))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return n, c, k


@given(nck())
def test_matches_binomial_form(t: tuple[int, int, int]) -> None:
    n, c, k = t
    exact = 1 - comb(n - c, k) / comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-9)


@given(nck())
def test_bounds(t: tuple[int, int, int]) -> None:
    n, c, k = t
    v = pass_at_k(n, c, k)
    assert 0.0 <= v <= 1.0
    assert (v == 0.0) == (c == 0)
    if n - c < k:
        assert v == 1.0


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_k1_is_c_over_n(t: tuple[int, int]) -> None:
    n, c = t
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)


@given(nck())
def test_monotone_in_k_and_c(t: tuple[int, int, int]) -> None:
    n, c, k = t
    v = pass_at_k(n, c, k)
    if k < n:
        assert pass_at_k(n, c, k + 1) >= v - 1e-12
    if c < n:
        assert pass_at_k(n, c + 1, k) >= v - 1e-12


def test_large_n_is_stable() -> None:
    assert pass_at_k(10_000, 1, 1) == pytest.approx(1e-4)
    assert 0.0 < pass_at_k(10_000, 1, 10) < 1.0


def test_invalid_arguments() -> None:
    for n, c, k in ((3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)):
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)


def test_mean_over_tasks() -> None:
    assert mean_pass_at_k([(5, 5), (5, 0)], 1) == pytest.approx(0.5)
    assert mean_pass_at_k([(2, 1), (0, 0)], 1) == pytest.approx(0.25)  # no sample = 0
    assert mean_pass_at_k([(2, 1), (5, 1)], 3) is None  # a task has too few samples
    assert mean_pass_at_k([], 1) is None
