"""Batched evaluation: checks of one unit that print the same kind of result asked
together, as one ``#eval!`` of a list (or one helper definition mapped over the batch's
arguments), and the list Lean prints back split into its elements.

In compiled mode each ``#eval!`` compiles a definition of its own: about 31 ms a check
on WASM, against about 8 ms a check for one ``#eval!`` of a list of 100 calls
(shared/lean/compiled-eval). A list whose answer is not exactly one clean list of as
many results (an elaboration error in one element, a panic, a crash) is asked again
one check at a time, so batching never changes an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from veriscale.backends.lean import data as data_route
from veriscale.backends.lean.render import PROBE, binders, words
from veriscale.benchmark.model import Signature
from veriscale.benchmark.verina import notation
from veriscale.values import ValueType

BATCH_SIZE = 64
"""Checks in one batched ``#eval!``: most of the saving, while a failed batch (asked
again singly) costs little."""

_EVAL = "#eval! "
_CHECK = "#check ("
CHECK_BATCH = "example : List Prop := ["
"""How a batch of ``#check (P)`` starts: silent where every term elaborates."""


def batch_key(command: str) -> tuple[int, str, str] | None:
    """(heartbeat budget, result kind, function) of a compiled-mode check that can join
    a batch with others of the same key, or None. Kinds: ``decide``, ``==`` (both
    print a Bool), ``value`` (a call, of the unit's return type) and ``check`` (the
    syntax filter's ``#check``). Checks of one
    function share a batch: they tend to fail together (a specification with no
    ``Decidable`` instance), so a batch rarely loses good terms to another's error."""
    budget = 0
    m = PROBE.match(command)
    if m:
        budget, command = int(m.group(1)), command[m.end():]
    if "\n" in command:
        return None
    if command.startswith(_CHECK):
        kind, rest = "check", command[len(_CHECK):]
        fn = re.match(r"[^\s()]+", rest)
        return (budget, kind, fn.group(0)) if fn else None
    if not command.startswith(_EVAL):
        return None
    body = command[len(_EVAL):]
    if body.startswith("decide ("):
        kind, rest = "decide", body[len("decide ("):]
    elif body.startswith("((") and ") == (" in body:
        kind, rest = "==", body[2:]
    elif body.startswith("("):
        kind, rest = "value", body[1:]
    else:
        return None
    fn = re.match(r"[^\s()]+", rest)
    return (budget, kind, fn.group(0)) if fn else None


def batch_command(commands: Sequence[str], budget: int = 0) -> tuple[str, int]:
    """One ``#eval!`` of the list of ``commands``' terms (all of one :func:`batch_key`),
    under the sum of their heartbeat budgets (``budget`` each, where they have none of
    their own: the file's), and the line (0-based, in the command) of its first term:
    term ``k`` is on line ``offset + k``, so an elaboration error says which term it
    belongs to."""
    key = batch_key(commands[0])
    assert key is not None
    key = (key[0] or budget, *key[1:])
    check = key[1] == "check"
    cut = len(_CHECK) - 1 if check else len(_EVAL)  # a #check keeps its term's parentheses
    terms = [PROBE.sub("", c, count=1)[cut:] for c in commands]
    head = [f"set_option maxHeartbeats {key[0] * len(commands)} in"] if key[0] else []
    # the syntax filter's batch prints nothing when it elaborates (a #check of the
    # list would pretty-print it whole: slower than 64 single #checks)
    head.append(CHECK_BATCH if check else _EVAL + "[")
    return "\n".join([*head, ",\n".join("  " + t for t in terms) + "]"]), len(head)


def _helper_call(term: str, kind: str, sig: Signature) -> tuple[str, str] | None:
    """(the helper's body over the signature's parameters, the element that calls it)
    for one batched term of ``kind``, or None when the term is not of the shape the
    backend writes (then the batch keeps its terms as they are)."""
    names = " ".join(f"({p.name})" for p in sig.params)
    pre, post, proof = f"{sig.name}_precond", f"{sig.name}_postcond", " (by sorry)"

    def args_of(text: str, head: str) -> str | None:
        if text == head:
            return ""
        return text[len(head) + 1:] if text.startswith(head + " ") else None

    if kind == "decide":
        prop = term[len("decide ("):-1]
        if prop.endswith(proof) and (a := args_of(prop[:-len(proof)], post)) is not None:
            return f"decide ({words(post, names, 'vsOutput', 'sorry')})", words(a)
        if (a := args_of(prop, pre)) is not None:
            return f"decide ({words(pre, names)})", a
        return None
    if kind == "==":
        call, sep, expected = term[2:-2].partition(") == (")
        if not sep or ") == (" in expected:
            return None
        with_proof = call.endswith(proof)
        a = args_of(call[:-len(proof)] if with_proof else call, sig.name)
        if a is None:
            return None
        body = words(sig.name, names, "sorry" if with_proof else "")
        return f"({body}) == vsOutput", words(a, f"({expected})")
    if kind == "value":
        call = term[1:-1]
        with_proof = call.endswith(proof)
        a = args_of(call[:-len(proof)] if with_proof else call, sig.name)
        if a is None:
            return None
        return words(sig.name, names, "sorry" if with_proof else ""), a
    return None


def helper_name(index: int) -> str:
    """A batch's helper: ``«»`` names are refused to candidates, so none can declare
    it in its unit; one per batch of a unit."""
    return f"«vs batch {int(index)}»"


def helper_batch(commands: Sequence[str], budget: int, sig: Signature,
                 index: int = 0, data: bool = False) -> tuple[str, int, bool] | None:
    """:func:`batch_command` through one helper definition: ``def «vs batch k» (params) :=
    decide (F_postcond params vsOutput sorry)`` (or the ``F_precond`` decision, the
    call, the ``==`` test), elaborated and compiled once, and a list of calls of it
    with each check's literals. A term elaborated on its own pays for its instance
    search, its ``by sorry`` and its compilation every time; measured on WASM (512
    postcondition checks of verina_basic_13): elaboration 23.3 s → 6.9 s, compilation
    8.6 s → 1.7 s, the same answers. ``decide`` of one instance or another gives the
    same ``Bool`` (``Decidable`` is a subsingleton), and a proof argument is erased by
    the compiler. None where a term is not of a known shape; a helper Lean cannot
    elaborate (no instance over free variables: a ``match`` that only reduces on
    literals) fails on its own lines, and the backend asks the batch again without it.

    With ``data`` (the file declares :data:`data.PRELUDE`), the checks' values go as
    one JSON string the helper is mapped over (:mod:`data`), where every value has a
    route; the third element says whether they did."""
    key = batch_key(commands[0])
    if key is None or key[1] == "check":
        return None
    calls, args = [], []
    body = None
    for c in commands:
        term = PROBE.sub("", c, count=1)[len(_EVAL):]
        got = _helper_call(term, key[1], sig)
        if got is None or (body is not None and got[0] != body):
            return None
        body = got[0]
        calls.append(words(helper_name(index), got[1]))
        args.append(got[1])
    assert body is not None
    params = binders(sig)
    types = [p.type for p in sig.params]
    if (key[1] == "decide" and "vsOutput" in body) or key[1] == "==":
        params = words(params, f"(vsOutput : {sig.return_text})")
        types.append(sig.return_type)
    result = "Bool" if key[1] in ("decide", "==") else sig.return_text
    budget = key[0] or budget
    head = [words("def", helper_name(index), params, f": {result} :="), f"  {body}"]
    if budget:
        head.append(f"set_option maxHeartbeats {budget * len(commands)} in")
    rows = _data_rows(types, args) if data else None
    if rows is not None:
        term = data_route.call_rows(helper_name(index), types, rows, notation.string_literal)
        return "\n".join([*head, _EVAL + "(" + term + ")"]), len(head), True
    head.append(_EVAL + "[")
    return "\n".join([*head, ",\n".join("  " + t for t in calls) + "]"]), len(head), False


def _data_rows(types: Sequence[ValueType], args: Sequence[str]) -> list[Any] | None:
    """Each check's values (its arguments' text, read back) as a JSON row, or None where
    one has no route: the batch then keeps its literals."""
    if not types or data_route.row_type(types) is None:
        return None
    try:
        return [data_route.row(types, notation.parse_args(types, a)) for a in args]
    except (data_route.NoRoute, ValueError):
        return None


_OPEN, _CLOSE = "([{", ")]}"


def split_list(text: str) -> list[str] | None:
    """The top-level elements of a printed Lean list ``[a, b, ...]``, or None if ``text``
    is not one. Brackets nest; string and character literals (with escapes) are opaque."""
    text = text.strip()
    if len(text) < 2 or text[0] != "[" or text[-1] != "]":
        return None
    inner = text[1:-1]
    if not inner.strip():
        return []
    out: list[str] = []
    depth, start, i, n = 0, 0, 0, len(inner)
    while i < n:
        ch = inner[i]
        if ch in "\"'":
            j = i + 1
            while j < n and inner[j] != ch:
                j += 2 if inner[j] == "\\" else 1
            if j >= n:
                return None
            i = j + 1
            continue
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            out.append(inner[start:i].strip())
            start = i + 1
        i += 1
    if depth != 0:
        return None
    out.append(inner[start:].strip())
    return out if all(out) else None
