"""Definition headers built from a task's signature, for prompts, parsers and offline code.

Built from the typed signature rather than cut out of ``task.lean``, so that
every generated definition has exactly the shape the backends expect:
``def F (x : T) (h_precond : F_precond (x)) : R`` as in VERINA.
"""

from __future__ import annotations

from typing import Any

from veriscale.benchmark.model import Signature, Task


def precond_name(sig: Signature) -> str:
    return f"{sig.name}_precond"


def postcond_name(sig: Signature) -> str:
    return f"{sig.name}_postcond"


def lean_binders(sig: Signature) -> str:
    return " ".join(f"({p.name} : {p.type_text})" for p in sig.params)


def lean_args(sig: Signature) -> str:
    """``(a) (b)``: every argument parenthesised, VERINA style."""
    return " ".join(f"({p.name})" for p in sig.params)


def lean_plain_args(sig: Signature) -> str:
    return " ".join(p.name for p in sig.params)


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def lean_precond_call(sig: Signature) -> str:
    return _join(precond_name(sig), lean_args(sig))


def lean_precond_header(sig: Signature) -> str:
    return _join("def", precond_name(sig), lean_binders(sig), ": Prop")


def lean_postcond_header(sig: Signature) -> str:
    return _join(
        "def",
        postcond_name(sig),
        lean_binders(sig),
        f"(result : {sig.return_text})",
        f"(h_precond : {lean_precond_call(sig)})",
        ": Prop",
    )


def lean_code_header(sig: Signature, name: str | None = None) -> str:
    return _join(
        "def",
        name or sig.name,
        lean_binders(sig),
        f"(h_precond : {lean_precond_call(sig)})",
        f": {sig.return_text}",
    )


def python_params(sig: Signature) -> str:
    return ", ".join(sig.names)


def python_precond_header(sig: Signature) -> str:
    return f"def precondition({python_params(sig)}) -> bool"


def python_postcond_header(sig: Signature) -> str:
    params = ", ".join([*sig.names, "result"])
    return f"def postcondition({params}) -> bool"


def python_code_header(sig: Signature, name: str | None = None) -> str:
    return f"def {name or sig.name}({python_params(sig)})"


def language(task: Task) -> str:
    """``"lean"``, ``"python"`` or a plug-in language: the specification language of the task."""
    from veriscale.backends.language import language_of

    return language_of(task)


# ---------------------------------------------------------------------- model JSON
#
# Models read and write plain JSON: a String is the JSON string itself (no VERINA
# body escaping: "C:\\new" means a backslash, not a newline), lists are JSON
# arrays. Lean-literal strings ("#[1, 2]", "some (3)") are still accepted on the
# way in, since the prompt's rules use them for Option values.


def to_model_json(t: Any, v: Any) -> Any:
    """The JSON a model should write for value ``v`` of type ``t`` (prompt examples)."""
    from veriscale.values import ArrayT, ListT, ProdT, Scalar, encode

    if isinstance(t, Scalar) and t.name in ("String", "Char"):
        return v
    if isinstance(t, (ListT, ArrayT)):
        return [to_model_json(t.elem, x) for x in v]
    if isinstance(t, ProdT):
        return [to_model_json(t.fst, v[0]), to_model_json(t.snd, v[1])]
    return encode(t, v)


def from_model_json(t: Any, raw: Any) -> Any:
    """The canonical value of ``t`` that a model's JSON ``raw`` denotes; raises when ill-typed."""
    from veriscale.values import ArrayT, ListT, ProdT, Scalar, conform, decode

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
    if not isinstance(raw, dict):
        raise ValueError(f"input must be an object, got {type(raw).__name__}")
    missing = [p.name for p in sig.params if p.name not in raw]
    extra = [k for k in raw if k not in sig.names]
    if missing or extra:
        raise WrongKeys(f"input keys differ from parameters: missing {missing}, extra {extra}")
    return tuple(from_model_json(p.type, raw[p.name]) for p in sig.params)
