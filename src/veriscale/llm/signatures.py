"""Definition headers built from a task's signature, for prompts, parsers and offline code.

Built from the typed signature rather than cut out of ``task.lean``, so that
every generated definition has exactly the shape the backends expect:
``def F (x : T) (h_precond : F_precond (x)) : R`` as in VERINA.
"""

from __future__ import annotations

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
    """``"lean"`` or ``"python"``: the specification language of the task."""
    if task.python is not None:
        return "python"
    return "lean"
