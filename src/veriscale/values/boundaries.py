"""Type-directed boundary values and the offline seed inputs built from them (no LLM).

The LLM seed prompt (paper Appendix C) asks for boundary-heavy candidates; this
module produces the same kind of candidates deterministically from the
signature alone, so the pipeline runs without an endpoint (the offline provider,
:mod:`veriscale.llm.offline`, serves them as its seeds). Per type there is an
ordered list of boundary values (most telling first: empty, zero, singleton,
±1, duplicates, sorted / reverse-sorted / all-equal, then extremes: values
beyond 2^63, long sequences, strings with quotes, backslashes, control and
non-ASCII characters). Inputs combine them across parameters under a budget:
first the "diagonal" (every parameter at its k-th boundary, k = 0, 1, ...),
then random combinations that also draw on the task's own values.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from veriscale.values import ArrayT, ListT, OptionT, ProdT, Scalar, Some, ValueType
from veriscale.values.inputs import Input, check_input, input_key, param_types, value_key

LONG = 60  # length of the "long" sequences: beyond any hand-written example

_INT = (
    0, 1, -1, 2, -2, 3, 10, -10, 100, -100,
    2**31 - 1, -(2**31), 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**30, -(10**30),
)  # fmt: skip
_NAT = (0, 1, 2, 3, 5, 10, 100, 255, 256, 2**32, 2**63 - 1, 2**63, 2**64, 10**30)
_UINT8 = (0, 1, 2, 127, 128, 254, 255)
_CHAR = ("a", "z", "A", "0", " ", "Z", "9", "'", '"', "\\", "\n", "\t", "é", "😀", "_")
_STRING = (
    "", "a", "ab", "aa", "abc", "a b", " ", "AbC", "racecar", "Hello, World!",
    "12345", '"quoted"', "back\\slash", "it's", "line\nbreak", "tab\there",
    "héllo wörld", "😀 emoji", "  leading and trailing  ",
    "ab" * (LONG // 2), "The quick brown fox jumps over the lazy dog",
)  # fmt: skip
_FLOAT = (
    0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -0.0, 3.14159, 1e-9, -1e-9, 1e9, -1e9,
    1.7976931348623157e308, 5e-324, math.inf, -math.inf,
)  # fmt: skip


def _dedup(values: Sequence[Any], key: Callable[[Any], Any] = lambda v: v) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for v in values:
        k = key(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


def _sortable(values: Sequence[Any]) -> list[Any] | None:
    try:
        return sorted(values)
    except TypeError:
        return None


def _scalar_boundaries(name: str, allow_nan: bool) -> list[Any]:
    if name == "Int":
        return list(_INT)
    if name == "Nat":
        return list(_NAT)
    if name == "UInt8":
        return list(_UINT8)
    if name == "Bool":
        return [False, True]
    if name == "Char":
        return list(_CHAR)
    if name == "String":
        return list(_STRING)
    if name == "Float":
        return [*_FLOAT, math.nan] if allow_nan else list(_FLOAT)
    return []  # pragma: no cover - Scalar names are fixed


def _long_sequences(elem: ValueType, small: list[Any]) -> list[tuple[Any, ...]]:
    """Long sequences: ascending, descending, shuffled, all-equal."""
    if isinstance(elem, Scalar) and elem.name in ("Int", "Nat", "UInt8"):
        start = -(LONG // 3) if elem.name == "Int" else 0
        ascending = tuple(range(start, start + LONG))
    else:
        cycle = tuple(small[i % len(small)] for i in range(LONG))
        ascending = tuple(_sortable(cycle) or cycle)
    shuffled = list(ascending)
    random.Random(0).shuffle(shuffled)
    return [ascending, ascending[::-1], tuple(shuffled), (small[0],) * LONG]


def _seq_boundaries(elem: ValueType, allow_nan: bool) -> list[tuple[Any, ...]]:
    elems = boundary_values(elem, allow_nan=allow_nan)
    if not elems:
        return [()]
    small = [e for e in elems if not (isinstance(e, float) and math.isnan(e))][:5] or elems[:1]
    out: list[tuple[Any, ...]] = [(), (elems[0],)]
    if len(elems) > 1:
        out.append((elems[1],))
    out.append((small[0], small[0]))  # duplicates
    ordered = _sortable(small)
    if ordered is not None and len(ordered) > 1:
        out += [tuple(ordered), tuple(ordered[::-1])]
        out.append((ordered[1], ordered[0], *ordered[2:]))  # almost sorted
    out.append((small[-1],) * 4)  # all equal
    out.append(tuple(small))
    out += [(e,) for e in elems[len(small) :]]  # extremes alone
    out.append(tuple(elems[-3:]))  # extremes together
    out += _long_sequences(elem, small)
    return out


@lru_cache(maxsize=256)
def _boundaries(t: ValueType, allow_nan: bool) -> tuple[Any, ...]:
    if isinstance(t, Scalar):
        values: list[Any] = _scalar_boundaries(t.name, allow_nan)
    elif isinstance(t, (ListT, ArrayT)):
        values = _seq_boundaries(t.elem, allow_nan)
    elif isinstance(t, OptionT):
        inner = boundary_values(t.elem, allow_nan=allow_nan)
        values = [None, *(Some(v) for v in inner[:6])]
        if len(inner) > 6:
            values.append(Some(inner[-1]))
    elif isinstance(t, ProdT):
        a = boundary_values(t.fst, allow_nan=allow_nan)
        b = boundary_values(t.snd, allow_nan=allow_nan)
        values = []
        for i in range(max(len(a), len(b)) if a and b else 0):
            values.append((a[i % len(a)], b[i % len(b)]))
            if i < 6:  # off-diagonal pairs, so that components differ (e.g. (0, 1))
                values.append((a[i % len(a)], b[(i + 1) % len(b)]))
                values.append((a[(i + 1) % len(a)], b[i % len(b)]))
    else:
        values = []  # opaque: only the task's own values
    return tuple(_dedup(values, key=value_key(t)))


def boundary_values(t: ValueType, *, allow_nan: bool = False) -> list[Any]:
    """Ordered, distinct boundary values of ``t`` (empty for opaque types)."""
    return list(_boundaries(t, allow_nan))


def own_inputs(task: Any) -> list[Input]:
    """The task's test inputs, then its reject inputs, without duplicates."""
    types = param_types(task.signature)
    key = input_key(types)
    raw = [case.input for case in task.tests] + list(task.reject_inputs)
    return _dedup([inp for inp in raw if check_input(types, inp) is None], key=key)


def combine(
    value_lists: Sequence[Sequence[Any]],
    budget: int,
    rng: random.Random,
    *,
    key: Callable[[Input], Any] = lambda inp: inp,
    exclude: Sequence[Input] = (),
    favourites: Sequence[Sequence[Any]] | None = None,
) -> list[Input]:
    """Up to ``budget`` distinct inputs: the diagonal first (parameter i at its
    k-th value), then random combinations. With ``favourites`` (per parameter),
    a random combination takes each parameter from them with probability 1/2."""
    if budget <= 0 or not value_lists or any(not vs for vs in value_lists):
        return []
    seen = {key(inp) for inp in exclude}
    out: list[Input] = []

    def offer(inp: Input) -> None:
        k = key(inp)
        if k not in seen:
            seen.add(k)
            out.append(inp)

    for k in range(max(len(vs) for vs in value_lists)):
        if len(out) >= budget:
            return out
        offer(tuple(vs[k % len(vs)] for vs in value_lists))
    attempts = 0
    while len(out) < budget and attempts < 20 * budget:
        attempts += 1
        picked = []
        for i, vs in enumerate(value_lists):
            fav = favourites[i] if favourites else ()
            source = fav if fav and rng.random() < 0.5 else vs
            picked.append(source[rng.randrange(len(source))])
        offer(tuple(picked))
    return out


def offline_seeds(
    task: Any, budget: int = 40, seed: int = 0, *, allow_nan: bool = False
) -> list[Input]:
    """The task's own test and reject inputs (first, deduplicated), then up to
    ``budget`` new boundary inputs; every input is well-typed by construction.
    Opaque parameters take only values the task's own inputs use."""
    types = param_types(task.signature)
    key = input_key(types)
    own = own_inputs(task)
    seen_values = [
        _dedup([inp[i] for inp in own], key=value_key(t))
        for i, t in enumerate(types)
    ]
    value_lists = [
        _dedup(
            boundary_values(t, allow_nan=allow_nan) + seen_values[i],
            key=value_key(t),
        )
        for i, t in enumerate(types)
    ]
    if not types:
        return own
    generated = combine(
        value_lists,
        budget,
        random.Random(seed),
        key=key,
        exclude=own,
        favourites=seen_values,
    )
    return own + generated


__all__ = ["LONG", "boundary_values", "combine", "offline_seeds", "own_inputs"]
