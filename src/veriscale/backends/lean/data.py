"""A batch's values as data: one JSON string that Lean decodes when the batch runs.

In compiled mode a batch of checks is one ``#eval!`` of a list of calls of a helper
(:func:`batching.helper_batch`). Written as Lean literals, every value is elaborated
(an ``OfNat`` and a ``Neg`` instance search per numeral) and then compiled into the
batch's code. Measured on the WASM Lean (``benchmarks/bench_lean_data.py``): 64
postcondition checks of verina_basic_13 (arrays of up to 60 integers) took 1.25 +
0.97 + 9.4 s to compile (LCNF base, mono, IR), their numerals hundreds of instance
searches, and at that size the list exceeded Lean's default ``maxRecDepth`` so the
whole batch went check by check. Given as one string, the same 64 values compile to
a call of a decoder: 0.06 + 0.05 + 0.04 s, and the decoding runs in 26 ms.

The decoder is the tool's own (:data:`PRELUDE`, after the compiled-evaluation
prelude and before any unit): a class ``VeriScaleData.Data`` with one instance per
type the route carries, each built from ``Lean.Json``'s accessors when the prelude
is elaborated. A candidate cannot name the class (the screen refuses ``VeriScale…``
names and ``_root_``), so no instance of its can change what a batch decodes, and
the use site names everything from the root. Types without a route (``Float``,
``UInt8``, opaque types) keep the literal batch; so does a value the encoder refuses
(a string with a lone surrogate). A batch whose decoding or answer is not clean is
asked again with literals, so the route never changes an answer: the real-Lean
tests compare both routes check for check.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from veriscale.values import ArrayT, ListT, OptionT, ProdT, Scalar, Some, ValueType

PRELUDE = """\
namespace VeriScaleData
class Data (α : Type) where
  get : Lean.Json → Except String α
instance : Data Nat := ⟨Lean.Json.getNat?⟩
instance : Data Int := ⟨Lean.Json.getInt?⟩
instance : Data Bool := ⟨Lean.Json.getBool?⟩
instance : Data String := ⟨Lean.Json.getStr?⟩
instance : Data Char := ⟨fun j => do
  let n ← j.getNat?
  if n.isValidChar then pure (Char.ofNat n) else throw s!"not a character: {n}"⟩
instance {α : Type} [Data α] : Data (List α) := ⟨fun j => do (← j.getArr?).toList.mapM Data.get⟩
instance {α : Type} [Data α] : Data (Array α) := ⟨fun j => do (← j.getArr?).mapM Data.get⟩
instance {α : Type} [Data α] : Data (Option α) := ⟨fun j => do
  match (← j.getArr?).toList with
  | [] => pure none
  | [x] => some <$> Data.get x
  | _ => throw "an option is [] or [x]"⟩
instance {α β : Type} [Data α] [Data β] : Data (α × β) := ⟨fun j => do
  match (← j.getArr?).toList with
  | [a, b] => return (← Data.get a, ← Data.get b)
  | _ => throw "a pair is [a, b]"⟩
def rows (α : Type) [Data α] (text : String) : List α :=
  match Lean.Json.parse text >>= fun j => do (← j.getArr?).toList.mapM Data.get with
  | .ok xs => xs
  | .error e => panic! s!"VeriScale data not decoded: {e}"
end VeriScaleData"""
"""The decoder, declared once per compiled-mode file (it needs ``import Lean``)."""

FAILED = "VeriScale data not decoded"
"""What the decoder's panic says (the batch is then asked again with literals)."""

_SCALARS = ("Nat", "Int", "Bool", "String", "Char")


def lean_type(t: ValueType) -> str | None:
    """The type the decoder reads a value of ``t`` as, named from the root; None where
    values of ``t`` have no route."""
    if isinstance(t, Scalar):
        return f"_root_.{t.name}" if t.name in _SCALARS else None
    if isinstance(t, (ListT, ArrayT, OptionT)):
        inner = lean_type(t.elem)
        head = {ListT: "List", ArrayT: "Array", OptionT: "Option"}[type(t)]
        return None if inner is None else f"(_root_.{head} {inner})"
    if isinstance(t, ProdT):
        a, b = lean_type(t.fst), lean_type(t.snd)
        return None if a is None or b is None else f"(_root_.Prod {a} {b})"
    return None


class NoRoute(ValueError):
    """A value the route does not carry (the batch keeps its literals)."""


def encode(t: ValueType, v: Any) -> Any:
    """``v`` (canonical, of type ``t``) as the JSON the decoder reads back as it."""
    if isinstance(t, Scalar):
        if t.name in ("Nat", "Int"):
            if isinstance(v, bool) or not isinstance(v, int):
                raise NoRoute(f"not an integer: {v!r}")
            return v
        if t.name == "Bool":
            if not isinstance(v, bool):
                raise NoRoute(f"not a boolean: {v!r}")
            return v
        if t.name == "String":
            if not isinstance(v, str) or any(0xD800 <= ord(c) <= 0xDFFF for c in v):
                raise NoRoute("not a string of scalar values")
            return v
        if t.name == "Char":
            if not isinstance(v, str) or len(v) != 1 or 0xD800 <= ord(v) <= 0xDFFF:
                raise NoRoute("not a character")
            return ord(v)
        raise NoRoute(f"no route for {t.name}")
    if isinstance(t, (ListT, ArrayT)):
        return [encode(t.elem, x) for x in v]
    if isinstance(t, OptionT):
        if v is None:
            return []
        if not isinstance(v, Some):
            raise NoRoute(f"not an option: {v!r}")
        return [encode(t.elem, v.value)]
    if isinstance(t, ProdT):
        return [encode(t.fst, v[0]), encode(t.snd, v[1])]
    raise NoRoute(f"no route for {t}")


def row_type(types: Sequence[ValueType]) -> str | None:
    """One check's values (``types``, at least one) as one nested pair type."""
    texts = [lean_type(t) for t in types]
    if not texts or any(x is None for x in texts):
        return None
    out = texts[-1]
    for text in reversed(texts[:-1]):
        out = f"(_root_.Prod {text} {out})"
    return out


def row(types: Sequence[ValueType], values: Sequence[Any]) -> Any:
    """One check's values as the JSON of :func:`row_type` (raises :class:`NoRoute`)."""
    encoded = [encode(t, v) for t, v in zip(types, values, strict=True)]
    out = encoded[-1]
    for x in reversed(encoded[:-1]):
        out = [x, out]
    return out


def projections(n: int, var: str = "vsRow") -> list[str]:
    """The ``n`` values of a row bound to ``var``: ``var.1``, ``var.2.1``, ..., the last
    ``var.2…2`` (a nested pair; one value is the row itself)."""
    if n == 1:
        return [var]
    out = []
    for i in range(n):
        path = ".2" * i + (".1" if i < n - 1 else "")
        out.append(f"{var}{path}")
    return out


def call_rows(helper: str, types: Sequence[ValueType], rows: Sequence[Any],
              lean_string: Any) -> str:
    """The term mapping ``helper`` over the decoded ``rows`` (``lean_string`` writes the
    JSON as a Lean string literal)."""
    kind = row_type(types)
    assert kind is not None
    text = json.dumps(list(rows), ensure_ascii=False, separators=(",", ":"))
    args = " ".join(projections(len(types)))
    return (f"_root_.List.map (fun vsRow => {helper} {args})\n"
            f"  (_root_.VeriScaleData.rows {kind} {lean_string(text)})")
