"""Parse model answers into typed objects, tolerating fences, prose, garbage and truncation.

The language-neutral pieces every reader shares (reasoning, fences, ids, answer
syntax, rejections) are :mod:`veriscale.backends.answers`, where the language
plug-ins reach them too.

Every parser either returns usable items plus the reasons some items were
dropped, or raises :class:`ParseError` when the answer holds nothing usable, so
the caller can re-ask. No parser raises anything else, whatever the text.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from veriscale.backends.answers import (
    IDENTIFIER,
    AnswerSyntax,
    Helper,
    ParseError,
    Rejection,
    adversary_id,
    answer_text,
    code_blocks,
    drop_markdown_lines,
    fenced_blocks,
)
from veriscale.backends.base import Implementation
from veriscale.backends.language import ADVERSARY_MARKER, LanguagePlugin, plugin_for
from veriscale.benchmark.model import Input, Signature, Task
from veriscale.llm import signatures as S
from veriscale.values.brackets import balanced_end

# ---------------------------------------------------------------------- seeds


@dataclass
class ParsedInputs:
    inputs: list[Input] = field(default_factory=list)
    ill_typed: int = 0  # items whose values do not fit the parameter types
    duplicates: int = 0
    proposed: int = 0  # items found in the answer
    dropped: dict[str, int] = field(default_factory=dict)  # reason kind -> count
    reasons: list[str] = field(default_factory=list)  # one per dropped item (first 20)

    def drop(self, kind: str, detail: str) -> None:
        self.dropped[kind] = self.dropped.get(kind, 0) + 1
        if len(self.reasons) < 20:
            self.reasons.append(f"{kind}: {detail}"[:300])


def _clean_json(text: str) -> str:
    """``//``, ``/* */`` and ``#`` comments and trailing commas removed, outside strings."""
    out: list[str] = []
    i, n = 0, len(text)
    quote = ""
    while i < n:
        c = text[i]
        if quote:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c == '"' or (c == "'" and _opens_literal(out)):
            quote = c
            out.append(c)
            i += 1
        elif text.startswith("//", i) or c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "]}":
                i += 1
                continue
            out.append(c)
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _opens_literal(before: list[str]) -> bool:
    """A ``'`` opens a Python string only after ``[ { , : (``; after a letter it is an
    apostrophe in prose ("Here's the list"), which must not swallow what follows."""
    for ch in reversed(before):
        if not ch.isspace():
            return ch in "[{,:("
    return True


def _object_at(text: str, pos: int) -> tuple[Any, int] | None:
    """The object starting at ``pos``: JSON, else an unambiguous Python literal."""
    try:
        return json.JSONDecoder().raw_decode(text, pos)
    except ValueError:
        pass
    end = balanced_end(text, pos)
    if end < 0:
        return None
    try:
        value = ast.literal_eval(text[pos:end])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value, end


def _array_objects(text: str, start: int) -> tuple[list[Any], int]:
    """Objects of the array opening at ``start``, one by one, so that an array cut
    short still yields its complete items; ([], start + 1) when it holds no object."""
    items: list[Any] = []
    pos = start + 1
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n or text[pos] != "{":
            break
        got = _object_at(text, pos)
        if got is None or not isinstance(got[0], dict):
            break
        items.append(got[0])
        pos = got[1]
    if pos < n and text[pos] == "]":
        pos += 1
    return items, (pos if items else start + 1)


def _json_values(text: str) -> list[Any]:
    """The objects of *every* JSON array of objects in the answer (valid and invalid
    seeds often come as two arrays); failing that, every top-level object.

    Reasoning blocks are ignored; comments, trailing commas and Python-repr
    quoting are tolerated; an answer cut short still yields its complete objects.
    """
    text = _clean_json(answer_text(text))
    items: list[Any] = []
    for block in code_blocks(text):
        pos = 0
        while True:
            start = block.find("[", pos)
            if start < 0:
                break
            found, pos = _array_objects(block, start)
            items.extend(found)
    if items:
        return items
    objects: list[Any] = []
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            break
        got = _object_at(text, start)
        if got is None:
            pos = start + 1
            continue
        if isinstance(got[0], dict):
            objects.append(got[0])
        pos = got[1]
    return objects


def parse_inputs(text: str, sig: Signature) -> ParsedInputs:
    """Candidate inputs from a seed answer; every dropped item is counted by reason
    (``ill_typed``, ``wrong_keys``, ``duplicate``, ``not_an_input``).

    Values are read as plain JSON (:func:`veriscale.llm.signatures.from_model_json`),
    not as VERINA-escaped text.
    """
    items = _json_values(text)
    out = ParsedInputs(proposed=len(items))
    seen: set[Input] = set()
    names = set(sig.names)
    for item in items:
        wrapped = isinstance(item.get("input"), dict)
        raw = item["input"] if wrapped else item
        if not wrapped and not (set(raw) & names or not names):
            out.drop("not_an_input", json.dumps(item, default=str)[:120])
            continue
        try:
            inp = S.decode_model_input(sig, raw)
        except S.WrongKeys as exc:
            out.ill_typed += 1
            out.drop("wrong_keys", str(exc))
            continue
        except Exception as exc:  # any decoding problem makes the item ill-typed
            out.ill_typed += 1
            out.drop("ill_typed", f"{type(exc).__name__}: {exc}")
            continue
        if inp in seen:
            out.duplicates += 1
            out.drop("duplicate", json.dumps(raw, default=str)[:120])
            continue
        seen.add(inp)
        out.inputs.append(inp)
    if not out.inputs and out.proposed == out.dropped.get("not_an_input", 0):
        raise ParseError("no JSON array of inputs found")
    return out


# ---------------------------------------------------------------------- decomposition


@dataclass(frozen=True)
class Decomposition:
    """The Input / Output model of a task (paper Appendix C, problem decomposition)."""

    input_model: str
    output_model: str
    origin: str = ""


# a heading's emphasis may close after its colon (``**Input:**``): consumed with it
_HEADING_IN = re.compile(r"(?im)^[ \t>#*_-]*(?:\d+[.)]\s*)?input\b[^:\n]{0,40}?[*_ \t]*:[*_]*")
_HEADING_OUT = re.compile(r"(?im)^[ \t>#*_-]*(?:\d+[.)]\s*)?output\b[^:\n]{0,40}?[*_ \t]*:[*_]*")


def parse_decomposition(text: str) -> Decomposition:
    """The Input / Output sections; reasoning is ignored and, when the answer holds
    several drafts, the last Input heading followed by an Output heading wins."""
    text = answer_text(text)
    body = "\n".join(code_blocks(text)) if "```" in text else text
    m = n = None
    for cand in reversed(list(_HEADING_IN.finditer(body))):
        out = _HEADING_OUT.search(body, cand.end())
        if out is not None:
            m, n = cand, out
            break
    if m is not None and n is not None:
        inp = body[m.end() : n.start()].strip()
        out_text = body[n.end() :].strip()
        if inp and out_text:
            return Decomposition(inp, out_text)
    m = re.search(r"(?i)\binput\b[*_ \t]*:", body)
    n = re.search(r"(?i)\boutput\b[*_ \t]*:", body[m.end() :]) if m else None
    if not m or not n:
        raise ParseError("no 'Input:' section followed by an 'Output:' section")
    inp = body[m.end() : m.end() + n.start()].strip()
    out = body[m.end() + n.end() :].strip()
    if not inp or not out:
        raise ParseError("empty Input or Output section")
    return Decomposition(inp, out)


# ---------------------------------------------------------------------- adversaries


@dataclass
class ParsedAdversaries:
    implementations: list[Implementation] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # reason per dropped candidate


def marker_chunks(code: str, comment: str) -> list[str]:
    pattern = re.compile(
        rf"^[ \t]*{re.escape(comment)}+[ \t]*\**[ \t]*{ADVERSARY_MARKER}\s*#?\s*\d*.*$",
        re.MULTILINE | re.IGNORECASE,
    )
    cuts = [m.start() for m in pattern.finditer(code)]
    if not cuts:
        return [code]
    pieces = [code[: cuts[0]]] + [
        code[a:b] for a, b in zip(cuts, [*cuts[1:], len(code)], strict=True)
    ]
    return [p for p in pieces if p.strip()]


def with_shared_helpers(code: str, pool: list[Helper], fn: str,
                        defined_names: Callable[[str], set[str]]) -> str:
    """``code`` preceded by the helpers of ``pool`` it uses and does not define
    (``defined_names``: the language's), transitively, in the order the answer
    defined them (first definition wins)."""
    first: dict[str, str] = {}
    for name, src in pool:
        if name != fn:
            first.setdefault(name, src)
    own = defined_names(code)
    needed: list[str] = []
    frontier = code
    while True:
        used = set(IDENTIFIER.findall(frontier))
        new = [n for n in first if n in used and n not in own and n not in needed]
        if not new:
            break
        needed.extend(new)
        frontier = "\n".join(first[n] for n in new)
    if not needed:
        return code
    order = list(first)
    sources: list[str] = []
    present = {ln.strip() for ln in code.splitlines()}
    for name in sorted(needed, key=order.index):
        src = first[name]
        # a helper the code already carries (an import that preceded it) goes in once
        if src not in sources and not (src.strip() in code and all(
                ln.strip() in present for ln in src.strip().splitlines())):
            sources.append(src)
    if not sources:
        return code
    return "\n\n".join([*sources, code.strip()]) + "\n"


def _answer_syntax(lang: str) -> AnswerSyntax:
    syntax = plugin_for(lang).answer_syntax
    if syntax is None:
        raise LookupError(f"the {lang} plug-in parses its red-team answers itself")
    return syntax


def parse_red_team_answer(plugin: LanguagePlugin, text: str, task: Task, origin: str = "",
                          target_spec: str = "", *, truncated: bool = False
                          ) -> tuple[list[Implementation], list[Any]]:
    """(implementations, rejected chunks) of a red-team answer: by the plug-in's
    ``answer_syntax`` where it has one, else by the plug-in's own parser."""
    if plugin.answer_syntax is None:
        return plugin.parse_adversary_answer(text, task, origin, target_spec,  # type: ignore[attr-defined]
                                             truncated=truncated)
    parsed = parse_adversaries(text, task.signature, plugin.name, origin=origin,
                               target_spec=target_spec, truncated=truncated)
    return parsed.implementations, parsed.rejected


def parse_adversaries(
    text: str, sig: Signature, lang: str, *, origin: str = "", target_spec: str = "",
    truncated: bool = False,
) -> ParsedAdversaries:
    """Numbered adversarial implementations from a red-team answer, renamed to the task
    function, deduplicated by code; raises :class:`ParseError` when none is usable.

    Every fence and every marker starts a chunk. Helpers defined anywhere in the
    answer (before the first marker, or in an earlier chunk) go with each adversary
    that uses them. In an answer cut by the token limit (``truncated``) the
    adversaries of the unterminated last chunk are dropped, the complete ones kept.
    """
    syntax = _answer_syntax(lang)
    blocks = fenced_blocks(answer_text(text), syntax.fences)
    chunks: list[tuple[str, bool]] = []  # (code, complete)
    for b, (body, closed) in enumerate(blocks):
        code = drop_markdown_lines(body) if syntax.markdown_headings else body
        pieces = marker_chunks(code, syntax.comment)
        for k, piece in enumerate(pieces):
            last = b == len(blocks) - 1 and k == len(pieces) - 1
            chunks.append((piece, not (truncated and last and not closed)))
    result = ParsedAdversaries()
    found: list[tuple[int, str]] = []
    pool: list[Helper] = []
    for index, (chunk, complete) in enumerate(chunks, start=1):
        sources, problems, helpers = syntax.adversaries_from(chunk, sig)
        pool.extend(helpers)
        if not complete and (sources or problems):
            result.rejected.extend(
                Rejection(f"chunk {index}: cut by the token limit (finish_reason=length)",
                          "truncated")
                for _ in sources or [None])
            continue
        result.rejected.extend(
            (p if isinstance(p, Rejection) else Rejection(p)).within(f"chunk {index}: ")
            for p in problems)
        found.extend((index, src) for src in sources)
    seen: set[str] = set()
    for _, src in found:
        src = with_shared_helpers(src, pool, sig.name, syntax.defined_names)
        ident = adversary_id(src)
        if ident in seen:
            continue
        seen.add(ident)
        result.implementations.append(
            Implementation(
                code=src, id=ident, strategy="llm-redteam", origin=origin,
                target_spec=target_spec,
            )
        )
    if not result.implementations:
        reasons = "; ".join(result.rejected[:3]) or "no implementation found"
        raise ParseError(reasons)
    return result
