"""Values as models read and write them (plain JSON), for prompts and seed answers.

Definition headers are the language plug-ins' (``backends/<language>/``).
"""

from __future__ import annotations

from typing import Any

from veriscale.benchmark.model import Signature

# ---------------------------------------------------------------------- model JSON
#
# Models read and write plain JSON: a String is the JSON string itself (no VERINA
# body escaping: "C:\\new" means a backslash, not a newline), lists are JSON
# arrays. Lean-literal strings ("#[1, 2]", "some (3)") are still accepted on the
# way in, since the prompt's rules use them for Option values.


def to_model_json(t: Any, v: Any) -> Any:
    """The JSON a model should write for value ``v`` of type ``t`` (prompt examples)."""
    from veriscale.benchmark.verina.codec import encode
    from veriscale.values import ArrayT, ListT, ProdT, Scalar

    if isinstance(t, Scalar) and t.name in ("String", "Char"):
        return v
    if isinstance(t, (ListT, ArrayT)):
        return [to_model_json(t.elem, x) for x in v]
    if isinstance(t, ProdT):
        return [to_model_json(t.fst, v[0]), to_model_json(t.snd, v[1])]
    return encode(t, v)


def from_model_json(t: Any, raw: Any) -> Any:
    """The canonical value of ``t`` that a model's JSON ``raw`` denotes; raises when ill-typed."""
    from veriscale.benchmark.verina.codec import decode
    from veriscale.values import ArrayT, ListT, ProdT, Scalar, conform

    if isinstance(t, Scalar) and t.name == "String":
        return conform(t, raw)
    if isinstance(t, Scalar) and t.name == "Char" and isinstance(raw, str) and len(raw) == 1:
        return conform(t, raw)
    if isinstance(t, (ListT, ArrayT)) and isinstance(raw, list):
        return tuple(from_model_json(t.elem, x) for x in raw)
    if isinstance(t, ProdT) and isinstance(raw, list) and len(raw) == 2:
        return (from_model_json(t.fst, raw[0]), from_model_json(t.snd, raw[1]))
    return decode(t, raw)


class WrongKeys(ValueError):
    """The keys of a proposed input are not exactly the parameter names."""


def encode_model_input(sig: Signature, inp: tuple[Any, ...]) -> dict[str, Any]:
    return {p.name: to_model_json(p.type, v) for p, v in zip(sig.params, inp, strict=True)}


def decode_model_input(sig: Signature, raw: Any) -> tuple[Any, ...]:
    """A model's ``{"param": json}`` → canonical input; raises ValueError naming the problem."""
    problem = sig.shape_problem(raw)
    if problem is not None:
        raise (WrongKeys if problem[0] == "keys" else ValueError)(problem[1])
    return tuple(from_model_json(p.type, raw[p.name]) for p in sig.params)
