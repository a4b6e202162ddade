"""Type-aware mutation (paper §3.1 and Appendix A).

The paper models mutation of a value of type τ as a five-tuple
M = (T, D, O, p, q): a type, its domain, a set of named *schemas*
``s(x; θ)`` that map D_τ to D_τ, a distribution ``p`` over schemas and, per
schema, a distribution ``q`` over its parameters θ. Here each schema is a small
object with a ``sample`` (draws θ from q given x) and an ``apply`` (computes
s(x; θ)); a :class:`SchemaSet` bundles a type's schemas with p; compound types
build their schema sets from their components' (like Hypothesis strategies).
Because every schema maps canonical values to canonical values, a mutant is
always a well-typed value of its type — no syntax filter is needed to undo a
bad mutation (the authors mutated ``Char`` as ``String`` and ``UInt8`` as
``Int``; see upstream-facts §1.2).

Rules for the paper's types follow Appendix A exactly; every other type gets
schemas in the same style (documented in :func:`schema_set`). Choices the paper
leaves open:

* ``UInt8``: arithmetic wraps modulo 256, as Lean's ``UInt8`` does.
* ``Float``: ``x+δ``, ``δ·x``, a special value (0.0, -0.0, ±inf) and a
  one-ulp nudge. ``0·±inf`` is NaN in IEEE; NaN is excluded by default
  (``allow_nan=False``) because NaN ≠ NaN defeats duplicate detection, so that
  product is taken as 0.0. With ``allow_nan=True`` NaN is also a special value.
* ``Opaque`` types (``Map Int Int``, ``Int -> Bool``) have no schemas and are
  left unchanged; they can still be swapped for another ingredient of the
  same type.

The *ingredient pool* holds every value seen so far, indexed by Lean type
(``List Int`` elements feed the ``Int`` pool, ...), in insertion order; with
probability ``ingredient_prob`` a mutation step reuses an ingredient instead of
applying a schema. All randomness comes from one ``random.Random``; nothing
iterates a set, so results do not depend on ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import hashlib
import math
import random
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from veriscale.values import (
    ArrayT,
    ListT,
    Opaque,
    OptionT,
    ProdT,
    Scalar,
    Some,
    ValueType,
)
from veriscale.values.inputs import Input, check_input, input_key, param_types

# ------------------------------------------------------------------ alphabets

SIGMA_SP: tuple[str, ...] = (" ", '"', "'", "\\", "\n", "\t", "é", "😀")
"""Σsp: special characters appended to strings. They are the ones that break
naive renderers (quotes, backslash, control characters) or byte-oriented code
(a 2-byte and a 4-byte UTF-8 character)."""

SIGMA_CHAR: tuple[str, ...] = (
    tuple(string.ascii_lowercase)
    + tuple(string.ascii_uppercase)
    + tuple(string.digits)
    + SIGMA_SP
)
"""Σchar: the characters a ``Char`` / ``List Char`` mutation may write: letters,
digits (what character-classification tasks test) and Σsp."""

DELTAS: tuple[int, ...] = (-2, -1, 0, 1, 2)  # Θ of x+δ and δ·x
APPEND_RANGE: tuple[int, int] = (-5, 5)  # Θ of the sequence append schema
UINT8_FRESH: tuple[int, ...] = (0, 1, 2, 5, 127, 128, 255)
FLOAT_FRESH: tuple[float, ...] = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
PAPER_ELEMS = ("Int", "Nat", "Char")  # element types with Appendix-A sequence rules


# ------------------------------------------------------------------ schemas


@dataclass(frozen=True)
class Step:
    """One applied schema with its parameters θ (the trace of a mutation)."""

    schema: str
    params: tuple[Any, ...] = ()

    def __str__(self) -> str:
        return f"{self.schema}({', '.join(_show(p) for p in self.params)})"


def _show(p: Any) -> str:
    return str(p) if isinstance(p, Step) else repr(p)


@dataclass(frozen=True)
class Schema:
    """A named, type-preserving mutation ``s(x; θ)`` with its parameter law q."""

    name: str
    sample: Callable[[Any, random.Random], tuple[Any, ...]]  # θ ~ q(· | x)
    apply: Callable[[Any, tuple[Any, ...]], Any]  # s(x; θ)


IDENTITY = Step("identity")


@dataclass(frozen=True)
class SchemaSet:
    """O_τ with its distribution p (uniform unless ``weights`` is given)."""

    type: ValueType
    schemas: tuple[Schema, ...]
    weights: tuple[float, ...] | None = None
    _by_name: dict[str, Schema] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({s.name: s for s in self.schemas})

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.schemas)

    def sample(self, value: Any, rng: random.Random) -> Step:
        """Draw a schema from p and its parameters from q (nothing applied yet)."""
        if not self.schemas:
            return IDENTITY
        if self.weights is None:
            schema = self.schemas[rng.randrange(len(self.schemas))]
        else:
            schema = rng.choices(self.schemas, weights=self.weights)[0]
        return Step(schema.name, schema.sample(value, rng))

    def apply(self, value: Any, step: Step) -> Any:
        if step.schema == "identity":
            return value
        return self._by_name[step.schema].apply(value, step.params)

    def mutate(self, value: Any, rng: random.Random) -> tuple[Any, Step]:
        step = self.sample(value, rng)
        return self.apply(value, step), step


def _no_params(_x: Any, _rng: random.Random) -> tuple[Any, ...]:
    return ()


def _choose(options: Sequence[Any]) -> Callable[[Any, random.Random], tuple[Any, ...]]:
    def sample(_x: Any, rng: random.Random) -> tuple[Any, ...]:
        return (options[rng.randrange(len(options))],)

    return sample


def _clip(z: int) -> int:
    return max(0, z)


def _integer_schemas(name: str) -> tuple[Schema, ...]:
    """Appendix A: Int ``x+δ``, ``δ·x``; Nat clipped at 0; UInt8 wrapped mod 256."""
    fix: Callable[[int], int]
    if name == "Nat":
        fix = _clip
    elif name == "UInt8":
        fix = lambda z: z % 256  # noqa: E731 - Lean's UInt8 arithmetic wraps
    else:
        fix = lambda z: z  # noqa: E731
    return (
        Schema("add", _choose(DELTAS), lambda x, th: fix(x + th[0])),
        Schema("mul", _choose(DELTAS), lambda x, th: fix(th[0] * x)),
    )


def _float_fix(allow_nan: bool) -> Callable[[float], float]:
    def fix(x: float) -> float:
        return 0.0 if math.isnan(x) and not allow_nan else x

    return fix


def _float_schemas(allow_nan: bool) -> tuple[Schema, ...]:
    fix = _float_fix(allow_nan)
    specials: tuple[float, ...] = (0.0, -0.0, math.inf, -math.inf)
    if allow_nan:
        specials += (math.nan,)
    return (
        Schema("add", _choose(tuple(float(d) for d in DELTAS)), lambda x, th: fix(x + th[0])),
        Schema("mul", _choose(tuple(float(d) for d in DELTAS)), lambda x, th: fix(th[0] * x)),
        Schema("special", _choose(specials), lambda _x, th: th[0]),
        Schema(
            "nudge",
            _choose((-math.inf, math.inf)),
            lambda x, th: fix(math.nextafter(x, th[0])),
        ),
    )


def _swapcase(c: str) -> str:
    out = c.swapcase()
    return out if len(out) == 1 else c  # 'ß'.swapcase() is 'SS': keep one char


def _shift(c: str, d: int) -> str:
    code = ord(c) + d
    if 0xD800 <= code <= 0xDFFF:  # skip the surrogate block, Lean Chars are scalars
        code = 0xE000 if d > 0 else 0xD7FF
    return chr(code) if 0 <= code <= 0x10FFFF else c


def _char_schemas() -> tuple[Schema, ...]:
    """Char: always exactly one character (the authors mutated it as a String)."""
    return (
        Schema("replace", _choose(SIGMA_CHAR), lambda _c, th: th[0]),
        Schema("swapcase", _no_params, lambda c, _th: _swapcase(c)),
        Schema("shift", _choose((-1, 1)), lambda c, th: _shift(c, th[0])),
    )


def _string_schemas() -> tuple[Schema, ...]:
    """Appendix A: ε, reversal, append a special character from Σsp."""
    return (
        Schema("empty", _no_params, lambda _s, _th: ""),
        Schema("reverse", _no_params, lambda s, _th: s[::-1]),
        Schema("append_special", _choose(SIGMA_SP), lambda s, th: s + th[0]),
    )


# ------------------------------------------------------------------ fresh values


def fresh_value(t: ValueType, rng: random.Random, *, allow_nan: bool = False) -> Any:
    """A small random value of ``t`` (what the append schemas add), or
    :data:`NO_FRESH` for types we cannot invent values of (opaque)."""
    if isinstance(t, Scalar):
        name = t.name
        if name == "Int":
            return rng.randint(*APPEND_RANGE)
        if name == "Nat":
            return _clip(rng.randint(*APPEND_RANGE))
        if name == "UInt8":
            return UINT8_FRESH[rng.randrange(len(UINT8_FRESH))]
        if name == "Bool":
            return rng.random() < 0.5
        if name == "Char":
            return SIGMA_CHAR[rng.randrange(len(SIGMA_CHAR))]
        if name == "String":
            return "".join(SIGMA_CHAR[rng.randrange(len(SIGMA_CHAR))] for _ in range(rng.randint(0, 3)))
        if name == "Float":
            return FLOAT_FRESH[rng.randrange(len(FLOAT_FRESH))]
    if isinstance(t, (ListT, ArrayT)):
        items = []
        for _ in range(rng.randint(0, 3)):
            item = fresh_value(t.elem, rng, allow_nan=allow_nan)
            if item is NO_FRESH:
                return ()
            items.append(item)
        return tuple(items)
    if isinstance(t, OptionT):
        if rng.random() < 0.5:
            return None
        inner = fresh_value(t.elem, rng, allow_nan=allow_nan)
        return None if inner is NO_FRESH else Some(inner)
    if isinstance(t, ProdT):
        a = fresh_value(t.fst, rng, allow_nan=allow_nan)
        b = fresh_value(t.snd, rng, allow_nan=allow_nan)
        return NO_FRESH if NO_FRESH in (a, b) else (a, b)
    return NO_FRESH


class _NoFresh:
    def __repr__(self) -> str:
        return "NO_FRESH"


NO_FRESH: Any = _NoFresh()


def _has_fresh(t: ValueType) -> bool:
    if isinstance(t, Opaque):
        return False
    if isinstance(t, ProdT):
        return _has_fresh(t.fst) and _has_fresh(t.snd)
    return True  # lists of opaque values can still be empty, options none


# ------------------------------------------------------------------ compound schemas


def _replace_at(x: tuple[Any, ...], j: int, v: Any) -> tuple[Any, ...]:
    return (*x[:j], v, *x[j + 1 :])


def _seq_schemas(elem: ValueType, allow_nan: bool) -> tuple[Schema, ...]:
    """Sequences: replace element j (via the element's schemas), append,
    delete j, reverse — Appendix A for ``Int``/``Nat``/``Char`` elements;
    other element types also get ``duplicate`` (x ++ [x_j]). Index schemas are
    the identity on the empty sequence."""
    if isinstance(elem, Scalar) and elem.name == "Char":
        inner = SchemaSet(elem, (Schema("char", _choose(SIGMA_CHAR), lambda _c, th: th[0]),))
    else:
        inner = schema_set(elem, allow_nan)

    def sample_replace(x: tuple[Any, ...], rng: random.Random) -> tuple[Any, ...]:
        if not x:
            return ()
        j = rng.randrange(len(x))
        return (j, inner.sample(x[j], rng))

    def apply_replace(x: tuple[Any, ...], th: tuple[Any, ...]) -> tuple[Any, ...]:
        if not th:
            return x
        j, step = th
        return _replace_at(x, j, inner.apply(x[j], step))

    def sample_index(x: tuple[Any, ...], rng: random.Random) -> tuple[Any, ...]:
        return (rng.randrange(len(x)),) if x else ()

    def apply_delete(x: tuple[Any, ...], th: tuple[Any, ...]) -> tuple[Any, ...]:
        return (*x[: th[0]], *x[th[0] + 1 :]) if th else x

    def sample_append(_x: Any, rng: random.Random) -> tuple[Any, ...]:
        return (fresh_value(elem, rng, allow_nan=allow_nan),)

    out = [
        Schema("replace", sample_replace, apply_replace),
        Schema("append", sample_append, lambda x, th: (*x, th[0])),
        Schema("delete", sample_index, apply_delete),
        Schema("reverse", _no_params, lambda x, _th: x[::-1]),
    ]
    if not _has_fresh(elem):
        out.pop(1)
    paper = isinstance(elem, Scalar) and elem.name in PAPER_ELEMS
    if not paper:
        out.append(
            Schema("duplicate", sample_index, lambda x, th: (*x, x[th[0]]) if th else x)
        )
    return tuple(out)


def _option_schemas(elem: ValueType, allow_nan: bool) -> tuple[Schema, ...]:
    """Option: none / some(mutate inner) (identity on none) / some(fresh)."""
    inner = schema_set(elem, allow_nan)

    def sample_inner(x: Any, rng: random.Random) -> tuple[Any, ...]:
        return () if x is None else (inner.sample(x.value, rng),)

    out = [
        Schema("none", _no_params, lambda _x, _th: None),
        Schema("inner", sample_inner, lambda x, th: Some(inner.apply(x.value, th[0])) if th else x),
    ]
    if _has_fresh(elem):

        def sample_fresh(_x: Any, rng: random.Random) -> tuple[Any, ...]:
            return (fresh_value(elem, rng, allow_nan=allow_nan),)

        out.append(Schema("some_fresh", sample_fresh, lambda _x, th: Some(th[0])))
    return tuple(out)


def _prod_schemas(t: ProdT, allow_nan: bool) -> tuple[Schema, ...]:
    """Products: mutate one component; ``swap`` when both components share a type."""
    fst, snd = schema_set(t.fst, allow_nan), schema_set(t.snd, allow_nan)
    out = [
        Schema("fst", lambda x, rng: (fst.sample(x[0], rng),), lambda x, th: (fst.apply(x[0], th[0]), x[1])),
        Schema("snd", lambda x, rng: (snd.sample(x[1], rng),), lambda x, th: (x[0], snd.apply(x[1], th[0]))),
    ]
    if t.fst == t.snd:
        out.append(Schema("swap", _no_params, lambda x, _th: (x[1], x[0])))
    return tuple(out)


@lru_cache(maxsize=512)
def schema_set(t: ValueType, allow_nan: bool = False) -> SchemaSet:
    """O_τ and p for type ``t`` (uniform p everywhere).

    ==============  ====================================================
    Int             add(δ), mul(δ), δ ∈ {-2..2}                (paper)
    Nat             the same, clipped at 0                      (paper)
    UInt8           the same, modulo 256
    Bool            negate
    Char            replace(c ∈ Σchar), swapcase, shift(±1 code point)
    String          empty, reverse, append_special(c ∈ Σsp)     (paper)
    Float           add(δ), mul(δ), special, nudge(one ulp)
    List/Array τ    replace(j, step of τ), append(fresh τ), delete(j),
                    reverse (paper for Int/Nat/Char; List Char replaces
                    by c ∈ Σchar); other τ also duplicate(j)
    Option τ        none, inner(step of τ), some_fresh
    τ × σ           fst(step of τ), snd(step of σ), swap when τ = σ
    opaque          no schemas (identity)
    ==============  ====================================================
    """
    schemas: tuple[Schema, ...]
    if isinstance(t, Scalar):
        if t.name in ("Int", "Nat", "UInt8"):
            schemas = _integer_schemas(t.name)
        elif t.name == "Bool":
            schemas = (Schema("negate", _no_params, lambda b, _th: not b),)
        elif t.name == "Char":
            schemas = _char_schemas()
        elif t.name == "String":
            schemas = _string_schemas()
        elif t.name == "Float":
            schemas = _float_schemas(allow_nan)
        else:  # pragma: no cover - Scalar names are fixed
            schemas = ()
    elif isinstance(t, (ListT, ArrayT)):
        schemas = _seq_schemas(t.elem, allow_nan)
    elif isinstance(t, OptionT):
        schemas = _option_schemas(t.elem, allow_nan)
    elif isinstance(t, ProdT):
        schemas = _prod_schemas(t, allow_nan)
    else:
        schemas = ()
    return SchemaSet(t, schemas)


# ------------------------------------------------------------------ ingredient pool


@lru_cache(maxsize=1024)
def pool_key(t: ValueType) -> ValueType:
    """Pools are shared by ``List τ`` and ``Array τ``: both are finite sequences
    (Appendix A models them alike) and have the same canonical values."""
    if isinstance(t, (ListT, ArrayT)):
        return ListT(pool_key(t.elem))
    if isinstance(t, OptionT):
        return OptionT(pool_key(t.elem))
    if isinstance(t, ProdT):
        return ProdT(pool_key(t.fst), pool_key(t.snd))
    return t


class IngredientPool:
    """Values seen in a task's candidates, per type, in first-seen order.

    Values are walked recursively, so the elements of a ``List Int`` feed the
    ``Int`` pool. Sets are used for membership only, never iterated.
    """

    def __init__(self, max_per_type: int = 10_000) -> None:
        self.max_per_type = max_per_type
        self._items: dict[ValueType, list[Any]] = {}
        self._seen: dict[ValueType, set[Any]] = {}

    def _slot(self, key: ValueType) -> tuple[list[Any], set[Any]]:
        items = self._items.get(key)
        if items is None:
            items = self._items[key] = []
            self._seen[key] = set()
        return items, self._seen[key]

    def _add_values(self, key: ValueType, values: Iterable[Any]) -> None:
        items, seen = self._slot(key)
        room = self.max_per_type - len(items)
        for v in values:
            if room <= 0:
                return
            if v not in seen:
                seen.add(v)
                items.append(v)
                room -= 1

    def add(self, t: ValueType, v: Any) -> None:
        self._add_values(pool_key(t), (v,))
        if isinstance(t, (ListT, ArrayT)):
            if isinstance(t.elem, Scalar):  # the common case: no recursion needed
                self._add_values(t.elem, v)
            else:
                for item in v:
                    self.add(t.elem, item)
        elif isinstance(t, ProdT):
            self.add(t.fst, v[0])
            self.add(t.snd, v[1])
        elif isinstance(t, OptionT) and v is not None:
            self.add(t.elem, v.value)

    def add_input(self, types: Sequence[ValueType], inp: Input) -> None:
        for t, v in zip(types, inp, strict=True):
            self.add(t, v)

    def values(self, t: ValueType) -> Sequence[Any]:
        return self._items.get(pool_key(t), ())

    def __len__(self) -> int:
        return sum(len(v) for v in self._items.values())


# ------------------------------------------------------------------ mutator


class Mutator:
    """Mutation of values of one type: an ingredient with probability
    ``ingredient_prob`` (when the pool has values of the type), else one schema."""

    def __init__(
        self, t: ValueType, *, ingredient_prob: float = 0.3, allow_nan: bool = False
    ) -> None:
        self.type = t
        self.ingredient_prob = ingredient_prob
        self.schemas = schema_set(t, allow_nan)

    def mutate_traced(
        self, value: Any, rng: random.Random, pool: IngredientPool | None = None
    ) -> tuple[Any, Step]:
        """One mutation step: ``(mutant, Step)``; the step names the schema
        (or ``ingredient``, with the pool index) and its parameters."""
        if pool is not None and self.ingredient_prob > 0 and rng.random() < self.ingredient_prob:
            candidates = pool.values(self.type)
            if candidates:
                index = rng.randrange(len(candidates))
                return candidates[index], Step("ingredient", (index,))
        return self.schemas.mutate(value, rng)

    def mutate(self, value: Any, rng: random.Random, pool: IngredientPool | None = None) -> Any:
        return self.mutate_traced(value, rng, pool)[0]


# ------------------------------------------------------------------ multi-step driver


class MutationConfig(BaseModel):
    """Table 3 defaults: 15 mutants per seed, 1–5 steps, ingredient reuse 0.3."""

    model_config = ConfigDict(extra="forbid")

    max_mutations_per_input: int = Field(15, ge=0)
    multi_step_size: int = Field(5, ge=1)
    ingredient_prob: float = Field(0.3, ge=0.0, le=1.0)
    seed: int = 42
    attempts_factor: int = Field(4, ge=1, description="attempts per seed = factor × max mutants")
    allow_nan: bool = False


@dataclass(frozen=True)
class MutatedInput:
    """A mutant input, the index of its seed and the (parameter, step) trace."""

    input: Input
    seed_index: int
    steps: tuple[tuple[int, Step], ...]


@dataclass
class MutationRun:
    mutants: list[MutatedInput] = field(default_factory=list)
    skipped_seeds: list[tuple[int, str]] = field(default_factory=list)  # (index, why)
    attempts: int = 0


def mutate_inputs_traced(
    signature: Any, seeds: Iterable[Input], config: MutationConfig | None = None,
    accept: Callable[[Input], bool] | None = None,
) -> MutationRun:
    """Multi-step mutation of every seed, with traces (see :func:`mutate_inputs`).

    Ill-typed seeds are skipped and reported, never mutated. ``accept`` (from the
    task's language plug-in, e.g. Coq's bound on unary ``nat``) refuses mutants
    the language cannot evaluate; a refused mutant costs an attempt.
    """
    cfg = config or MutationConfig()
    types = param_types(signature)
    rng = random.Random(cfg.seed)
    mutators = [
        Mutator(t, ingredient_prob=cfg.ingredient_prob, allow_nan=cfg.allow_nan) for t in types
    ]
    run = MutationRun()
    valid: list[tuple[int, Input]] = []
    for index, inp in enumerate(seeds):
        why = check_input(types, inp)
        if why:
            run.skipped_seeds.append((index, why))
        else:
            valid.append((index, inp))
    if not types:
        return run
    pool = IngredientPool()
    for _, inp in valid:
        pool.add_input(types, inp)
    key = input_key(types)
    seen = {key(inp) for _, inp in valid}
    limit = cfg.max_mutations_per_input
    for index, inp in valid:
        made = attempts = 0
        while made < limit and attempts < cfg.attempts_factor * limit:
            attempts += 1
            current = list(inp)
            steps: list[tuple[int, Step]] = []
            for _ in range(rng.randint(1, cfg.multi_step_size)):
                i = rng.randrange(len(types))
                current[i], step = mutators[i].mutate_traced(current[i], rng, pool)
                steps.append((i, step))
            mutant = tuple(current)
            if accept is not None and not accept(mutant):
                continue
            k = key(mutant)
            if k in seen:
                continue
            seen.add(k)
            run.mutants.append(MutatedInput(mutant, index, tuple(steps)))
            pool.add_input(types, mutant)
            made += 1
        run.attempts += attempts
    return run


def mutate_inputs(
    signature: Any, seeds: Iterable[Input], config: MutationConfig | None = None,
    accept: Callable[[Input], bool] | None = None,
) -> list[Input]:
    """Up to ``max_mutations_per_input`` distinct new mutants per seed, each
    made by 1..``multi_step_size`` steps that each mutate one uniformly chosen
    parameter (paper §3.1). Mutants equal to any seed or earlier mutant are
    dropped. Deterministic in ``config.seed``."""
    return [m.input for m in mutate_inputs_traced(signature, seeds, config, accept).mutants]


def task_seed(seed: int, task_id: str) -> int:
    """A per-task seed derived from the run seed, stable across interpreters
    (``hash()`` of a str is salted by ``PYTHONHASHSEED``; sha256 is not)."""
    digest = hashlib.sha256(f"{seed}:{task_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


__all__ = [
    "NO_FRESH",
    "SIGMA_CHAR",
    "SIGMA_SP",
    "IngredientPool",
    "MutatedInput",
    "MutationConfig",
    "MutationRun",
    "Mutator",
    "Schema",
    "SchemaSet",
    "Step",
    "check_input",
    "fresh_value",
    "input_key",
    "mutate_inputs",
    "mutate_inputs_traced",
    "param_types",
    "pool_key",
    "schema_set",
    "task_seed",
]
