"""The four expansion prompts (paper Appendix C), in our own words, for Lean and Python tasks.

Each builder returns chat messages ``[system, user]``. The rules carried over
from the paper: seeds are a bare JSON array of ``{"input": {...}}`` objects with
exactly the parameter names, valid and invalid around the GT precondition; the
decomposition separates explicit (E) from hypothesised (H) constraints; the
specification translates only E constraints and puts helpers first; the red
team writes total, pure, *wrong* code that a flawed postcondition still
accepts, with no axioms, sorry, unsafe tricks, instances or IO.
"""

from __future__ import annotations

import json

from veriscale.backends.base import Spec
from veriscale.benchmark.model import Task
from veriscale.llm import signatures as S

Message = dict[str, str]

SPEC_PRE_MARKER = "Precondition Implementation"
SPEC_POST_MARKER = "Postcondition Implementation"
ADVERSARY_MARKER = "Adversarial Implementation"


def _msgs(system: str, user: str) -> list[Message]:
    return [{"role": "system", "content": system.strip()}, {"role": "user", "content": user.strip()}]


def _plugin(task: Task):
    from veriscale.backends.language import has_plugin, plugin_for

    return plugin_for(task) if has_plugin(S.language(task)) else None


def _lang_name(task: Task) -> str:
    plugin = _plugin(task)
    if plugin is not None:
        return plugin.display_name
    return "Python" if S.language(task) == "python" else "Lean 4"


def _fence(task: Task) -> str:
    plugin = _plugin(task)
    if plugin is not None:
        return plugin.code_fence()
    return "python" if S.language(task) == "python" else "lean"


# ---------------------------------------------------------------------- GT text


def gt_precondition_text(task: Task) -> str:
    """The full GT precondition definition (with its helpers), as shown to the model."""
    sig = task.signature
    if task.python is not None:
        parts = [task.python.aux.strip(), task.python.precondition.strip()]
        return "\n\n".join(p for p in parts if p)
    lean = task.lean
    body = lean.precond if lean is not None else "True"
    aux = lean.precond_aux.strip() if lean is not None else ""
    definition = f"{S.lean_precond_header(sig)} :=\n{_indent(body)}"
    return f"{aux}\n\n{definition}" if aux else definition


def spec_text(task: Task, spec: Spec) -> tuple[str, str]:
    """(precondition, postcondition) source of a candidate spec, GT where it has none."""
    sig = task.signature
    if task.python is not None:
        pre = spec.precond if spec.precond is not None else gt_precondition_text(task)
        post = spec.postcond if spec.postcond is not None else task.python.postcondition
        return pre.strip(), post.strip()
    lean = task.lean
    pre_body = spec.precond if spec.precond is not None else (lean.precond if lean else "True")
    pre_aux = spec.precond_aux if spec.precond is not None else (lean.precond_aux if lean else "")
    post_body = spec.postcond if spec.postcond is not None else (lean.postcond if lean else "True")
    post_aux = (
        spec.postcond_aux if spec.postcond is not None else (lean.postcond_aux if lean else "")
    )
    pre = f"{S.lean_precond_header(sig)} :=\n{_indent(pre_body)}"
    post = f"{S.lean_postcond_header(sig)} :=\n{_indent(post_body)}"
    return (
        "\n\n".join(p for p in (pre_aux.strip(), pre) if p),
        "\n\n".join(p for p in (post_aux.strip(), post) if p),
    )


def _indent(body: str) -> str:
    lines = body.strip("\n").splitlines() or ["True"]
    import textwrap

    return textwrap.indent(textwrap.dedent("\n".join(lines)), "  ")


# ---------------------------------------------------------------------- seeds

_VALUE_RULES = """\
Value encoding (JSON):
- Nat, Int, UInt8: JSON integers (Nat and UInt8 never negative); Float: JSON numbers;
- Bool: true / false; String: a JSON string; Char: a JSON string of exactly one character;
- List T and Array T: JSON arrays of T values;
- a pair T × U: a JSON array of two values;
- Option T: the string "none", or "some (v)" with v written as a Lean literal."""


def seed_messages(
    task: Task, count: int, *, example_limit: int = 5, invalid_share: float = 0.2
) -> list[Message]:
    """Ask for ``count`` candidate inputs, about ``invalid_share`` of them invalid."""
    sig = task.signature
    lang = _lang_name(task)
    invalid = min(count, max(2, round(invalid_share * count))) if count else 0
    system = f"""
You propose test inputs for a {lang} verification task.
Answer with a JSON array and nothing else: no prose, no markdown, no code fences.
Every element has the form {{"input": {{"<parameter>": <value>, ...}}}}.
Rules:
1. The keys of each "input" object are exactly the parameter names: none missing, none extra.
2. Every value is plain JSON and fits the declared parameter type.
3. The ground-truth precondition is the boundary of valid inputs. Propose inputs on both
   sides of it, concentrating on the boundary.
4. "Likely invalid" means well-formed and well-typed but violating the precondition; it
   never means malformed JSON.
5. Prefer hard edge cases: empty and singleton collections, zero, one, negative numbers,
   duplicates, sorted and unsorted orders, long inputs, unusual characters.
6. Give exactly the number of candidates asked for, all different.
{_VALUE_RULES}
"""
    params = [{"param_name": p.name, "param_type": p.type_text} for p in sig.params]
    # The JSON the model should write back (lists as arrays, strings unescaped).
    valid_examples = [{"input": S.encode_model_input(sig, t.input)}
                      for t in task.tests[:example_limit]]
    invalid_examples = [{"input": S.encode_model_input(sig, r)}
                        for r in task.reject_inputs[:example_limit]]
    user = f"""
Task description:
{task.description.strip()}

Ground-truth precondition ({lang}):
{gt_precondition_text(task)}

The precondition decides which inputs are valid. Give inputs that satisfy it and inputs
that violate it, most of them close to its boundary.

How many: {count} candidates in total, about {invalid} likely invalid and {count - invalid}
likely valid. If the exact split is hard to reach, keep the total and the boundary focus.

Parameters (JSON): {json.dumps(params, ensure_ascii=False)}

Examples of likely-valid inputs: {json.dumps(valid_examples, ensure_ascii=False)}
Examples of likely-invalid inputs (possibly none): {json.dumps(invalid_examples, ensure_ascii=False)}

Answer format: [{{"input": {{"param": value, ...}}}}, ...]
"""
    return _msgs(system, user)


# ---------------------------------------------------------------------- decomposition

DECOMPOSE_SYSTEM = """
Role: you turn a programming problem statement into a precise mathematical model.

Instructions:
1. Input information:
   a. contents: declare the input variables;
   b. constraints: their types / data structures, and the properties they must satisfy.
      Tag every property E (Explicit: stated in the problem) or H (Hypothesis: plausible
      but not stated).
2. Output information:
   a. contents: declare the output variables (name them res1, res2, ... if needed);
   b. constraints: their types / data structures, the properties they must satisfy and
      how they relate to the input (which elements come from the input, which order is
      preserved, which input elements must all appear, ...).
3. Be precise about data structures (lists, arrays, tuples) and number kinds (natural,
   integer, real), and about the exact input/output relation.
4. Non-emptiness, integrality, positivity, uniqueness, sortedness and similar properties
   are E only when the problem states them.
5. Do not explain the constraints.

Answer strictly in this form:
Input:
a. <contents>
b. <constraints>
- <constraint 1>
- ...
Output:
a. <contents>
b. <constraints>
- <constraint 1>
- ...
"""


def decompose_messages(task: Task) -> list[Message]:
    return _msgs(DECOMPOSE_SYSTEM, f"Problem description:\n{task.description.strip()}")


# ---------------------------------------------------------------------- specifications


def spec_messages(task: Task, input_model: str, output_model: str) -> list[Message]:
    sig = task.signature
    lang = _lang_name(task)
    fence = _fence(task)
    comment = "#" if fence == "python" else "--"
    pre_line, post_line = f"{comment} {SPEC_PRE_MARKER}", f"{comment} {SPEC_POST_MARKER}"
    plugin = _plugin(task)
    if plugin is not None:
        parts = plugin.prompt_parts(task)
        pre_sig, post_sig, extra = parts["pre_sig"], parts["post_sig"], parts["rules"]
        pre_line, post_line = parts["pre_marker"], parts["post_marker"]
    elif fence == "python":
        pre_sig, post_sig = S.python_precond_header(sig), S.python_postcond_header(sig)
        extra = (
            "Write plain Python using only the standard library. Arguments arrive as plain "
            "Python values (int, bool, float, str, list, tuple, None). Both functions return "
            "a bool and must not raise on well-typed arguments."
        )
    else:
        pre_sig, post_sig = S.lean_precond_header(sig), S.lean_postcond_header(sig)
        extra = (
            "Write complete Lean 4 definitions `def <name> ... := <body>` with exactly the "
            "given names, parameter names and parameter types. Use core Lean 4 only (no "
            "Mathlib), and keep the propositions decidable where you can."
        )
    system = f"""
Role: you are an expert in {lang}. From a problem description and its mathematical model
you write the precondition and the postcondition of the function.

Instructions:
1. Use everything in the Input and Output models (contents and constraints).
2. Re-read the problem description to find details the models missed.
3. Use the given signatures for the precondition and the postcondition.
4. In the precondition translate only the constraints tagged E; ignore those tagged H.
5. Put any helper definitions directly before the condition that uses them.
6. {extra}

Answer strictly in this form, one code block:
```{fence}
{pre_line}
<helpers for the precondition, if any, then the precondition>
{post_line}
<helpers for the postcondition, if any, then the postcondition>
```
"""
    user = f"""
Problem description:
{task.description.strip()}

Input:
{input_model.strip()}

Output:
{output_model.strip()}

Precondition signature:
{pre_sig}

Postcondition signature:
{post_sig}
"""
    return _msgs(system, user)


# ---------------------------------------------------------------------- red team

_LEAN_FORBIDDEN = """\
Your functions must be pure and total. Never:
- declare an `axiom`, use `sorry`, or define anything `opaque` or `noncomputable`;
- use `unsafe`, `partial`, or recursion that does not terminate;
- use `@[implemented_by ...]`, `@[extern ...]` or any attribute that changes how code runs;
- declare an `instance`, or redefine `BEq`, `DecidableEq`, `LE`, `LT`, `Ord`, `Hashable`,
  `Membership`, `GetElem` or arithmetic for standard types;
- use `IO`, `ST`, references or any side effect; `Classical.choose` / `choose_spec`;
- use `#eval`, `#exit`, `run_cmd`, `macro`, `syntax`, `elab`, `set_option` or `open ... in`;
- define new `structure`s or `inductive`s, wrapper or sentinel types, `Subtype` values with
  fake proofs, or `Decidable` instances that always say yes.
Outputs are plain values of the declared type (Nat, Int, String, List α, Array α, Option α,
tuples of these, ...)."""

_PY_FORBIDDEN = """\
Your functions must be pure and terminate quickly. Never import anything (no os, sys,
subprocess, builtins, inspect, ctypes, importlib), never use eval, exec, compile, open,
globals, setattr on modules, __import__, dunder attributes or threads, and never try to
read, patch or replace the checker. Return plain values of the declared type (int, bool,
float, str, list, tuple, None)."""


def adversary_messages(task: Task, spec: Spec, count: int = 5) -> list[Message]:
    """Ask for ``count`` wrong implementations that the flawed ``spec`` still accepts."""
    sig = task.signature
    fence = _fence(task)
    lang = _lang_name(task)
    comment = "#" if fence == "python" else "--"
    plugin = _plugin(task)
    marker = f"{comment} {ADVERSARY_MARKER} {{i}}"
    if plugin is not None:
        parts = plugin.prompt_parts(task)
        s = task.coq if task.coq is not None else None
        pre = post = ""
        if s is not None:
            pre_body = spec.precond if spec.precond is not None else s.precond
            post_body = spec.postcond if spec.postcond is not None else s.postcond
            pre_aux = spec.precond_aux if spec.precond is not None else s.precond_aux
            post_aux = spec.postcond_aux if spec.postcond is not None else s.postcond_aux
            pre = f"{pre_aux.strip()}\n\n{parts['pre_sig']}\n  {pre_body.strip()}.".strip()
            post = f"{post_aux.strip()}\n\n{parts['post_sig']}\n  {post_body.strip()}.".strip()
        impl_sig, forbidden = parts["impl_sig"], parts["rules"]
        loopholes, strategies = parts["loopholes"], parts["strategies"]
        marker = parts["adversary_marker"]
    else:
        pre, post = spec_text(task, spec)
    if plugin is not None:
        pass  # the plug-in gave every language part above
    elif fence == "python":
        impl_sig = S.python_code_header(sig)
        forbidden = _PY_FORBIDDEN
        loopholes = (
            "- does it check len(result) but not the elements?\n"
            "- does it check sortedness but not that the elements come from the input?\n"
            "- does it use any()/an existential without bounding the witness?\n"
            "- is an all(...) over an empty collection vacuously true?"
        )
        strategies = (
            "constant return (0, [], '', False, None, (0, 0)); input echoing (return the "
            "input unchanged); trivial synthesis ([0] * n, list(range(n)), made-up data of "
            "the right shape or length); malicious deletion (delete everything, return []); "
            "edge-case exploitation (force empty / zero / None states that make universal "
            "checks vacuous)"
        )
    else:
        impl_sig = S.lean_code_header(sig)
        forbidden = _LEAN_FORBIDDEN
        loopholes = (
            "- does it check `List.length` but not the elements?\n"
            "- does it check sortedness but not that the elements come from the input?\n"
            "- does it use `∃` without bounding the witness?\n"
            "- is a `∀ x ∈ xs` check vacuously true on the empty list?"
        )
        strategies = (
            "constant return (`0`, `[]`, `#[]`, `\"\"`, `false`, `none`); input echoing "
            "(return an input unchanged); trivial synthesis (`List.replicate n 0`, "
            "`List.range n`, made-up data of the right shape or length); malicious deletion "
            "(delete everything, return `[]` / `#[]`); edge-case exploitation (force empty / "
            "zero / `none` states that make universal checks vacuous)"
        )
    system = f"""
Role: you are a red teamer in formal verification, a deliberately lazy programmer who games
specifications. You look for what a flawed postcondition forgot to check and write
degenerate {lang} code that exploits it.

Instructions:
1. Do NOT solve the problem. Code that is correct for the problem description is a failure.
   Every function must give outputs that are WRONG for the description yet are accepted by
   the given postcondition.
2. Find what the postcondition does not check. For example:
{loopholes}
3. Strategies to consider: {strategies}.
4. {forbidden}
5. Write exactly {count} different implementations, each with a different strategy where
   possible.
6. Each implementation has exactly the given signature, except that its name ends with its
   index i (for example `{sig.name}1`, `{sig.name}2`). Helper functions, if any, come
   before it and must have names of their own.
7. No explanations.

Answer strictly in this form, one code block:
```{fence}
{marker.format(i=1)}
<implementation 1>
{marker.format(i=2)}
<implementation 2>
...
```
"""
    user = f"""
Problem description:
{task.description.strip()}

Precondition (inputs always satisfy it):
```{fence}
{pre}
```

Postcondition (the flawed contract your outputs must satisfy):
```{fence}
{post}
```

Implementation signature:
```{fence}
{impl_sig}
```
"""
    return _msgs(system, user)
