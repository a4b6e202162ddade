"""Python's parts of the LLM prompts: headers, rules for specifications, the red
team's forbidden constructs, loopholes and strategies (paper Appendix C, in our own
words), and the ground truth as shown to a model."""

from __future__ import annotations

from veriscale.backends.base import Spec
from veriscale.backends.python.sections import python_sections
from veriscale.benchmark.model import Signature, Task


def params(sig: Signature) -> str:
    return ", ".join(sig.names)


def precond_header(sig: Signature) -> str:
    return f"def precondition({params(sig)}) -> bool"


def postcond_header(sig: Signature) -> str:
    return f"def postcondition({', '.join([*sig.names, 'result'])}) -> bool"


def code_header(sig: Signature, name: str | None = None) -> str:
    return f"def {name or sig.name}({params(sig)})"


COMMENT = "#"  # a line comment: the markers of an answer start with it

SPEC_RULES = (
    "Write plain Python using only the standard library. Arguments arrive as plain "
    "Python values (int, bool, float, str, list, tuple, None). Both functions return "
    "a bool and must not raise on well-typed arguments."
)

FORBIDDEN = """\
Your functions must be pure and terminate quickly. Never import anything (no os, sys,
subprocess, builtins, inspect, ctypes, importlib), never use eval, exec, compile, open,
globals, setattr on modules, __import__, dunder attributes or threads, and never try to
read, patch or replace the checker. Return plain values of the declared type (int, bool,
float, str, list, tuple, None)."""

LOOPHOLES = (
    "- does it check len(result) but not the elements?\n"
    "- does it check sortedness but not that the elements come from the input?\n"
    "- does it use any()/an existential without bounding the witness?\n"
    "- is an all(...) over an empty collection vacuously true?"
)

STRATEGIES = (
    "constant return (0, [], '', False, None, (0, 0)); input echoing (return the "
    "input unchanged); trivial synthesis ([0] * n, list(range(n)), made-up data of "
    "the right shape or length); malicious deletion (delete everything, return []); "
    "edge-case exploitation (force empty / zero / None states that make universal "
    "checks vacuous)"
)


def gt_precondition_text(task: Task) -> str:
    """The GT ``precondition`` after the task's helpers."""
    py = python_sections(task)
    assert py is not None
    parts = [py.aux.strip(), py.precondition.strip()]
    return "\n\n".join(p for p in parts if p)


def spec_texts(task: Task, spec: Spec) -> tuple[str, str]:
    py = python_sections(task)
    assert py is not None
    pre = spec.precond if spec.precond is not None else gt_precondition_text(task)
    post = spec.postcond if spec.postcond is not None else py.postcondition
    return pre.strip(), post.strip()
