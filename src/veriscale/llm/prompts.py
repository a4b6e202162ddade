"""The four expansion prompts (paper Appendix C), in our own words, for any language.

Each builder returns chat messages ``[system, user]``. The rules carried over
from the paper: seeds are a bare JSON array of ``{"input": {...}}`` objects with
exactly the parameter names, valid and invalid around the GT precondition; the
decomposition separates explicit (E) from hypothesised (H) constraints; the
specification translates only E constraints and puts helpers first; the red
team writes total, pure, *wrong* code that a flawed postcondition still
accepts, with no axioms, sorry, unsafe tricks, instances or IO. The language's
parts (headers, rules, markers, fences) come from its plug-in (``prompt_parts``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from veriscale.backends.base import Spec
from veriscale.backends.language import (  # noqa: F401 (the markers: prompts' words)
    ADVERSARY_MARKER,
    SPEC_POST_MARKER,
    SPEC_PRE_MARKER,
)
from veriscale.benchmark.model import Task
from veriscale.llm import signatures as S

if TYPE_CHECKING:
    from veriscale.backends.language import LanguagePlugin

Message = dict[str, str]



def _msgs(system: str, user: str) -> list[Message]:
    return [{"role": "system", "content": system.strip()}, {"role": "user", "content": user.strip()}]


def _plugin(task: Task) -> LanguagePlugin:
    from veriscale.backends.language import plugin_for

    return plugin_for(task)


def gt_precondition_text(task: Task) -> str:
    """The full GT precondition definition (with its helpers), as shown to the model."""
    return _plugin(task).gt_precondition_text(task)


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
    lang = _plugin(task).display_name
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
    plugin = _plugin(task)
    lang, fence, parts = plugin.display_name, plugin.code_fence(), plugin.prompt_parts(task)
    pre_sig, post_sig, extra = parts.pre_sig, parts.post_sig, parts.spec_rules
    pre_line, post_line = parts.pre_marker, parts.post_marker
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

def adversary_messages(task: Task, spec: Spec, count: int = 5) -> list[Message]:
    """Ask for ``count`` wrong implementations that the flawed ``spec`` still accepts."""
    sig = task.signature
    plugin = _plugin(task)
    lang, fence, parts = plugin.display_name, plugin.code_fence(), plugin.prompt_parts(task)
    pre, post = plugin.spec_texts(task, spec)
    impl_sig, forbidden = parts.impl_sig, parts.forbidden
    loopholes, strategies = parts.loopholes, parts.strategies
    marker = parts.adversary_marker
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
