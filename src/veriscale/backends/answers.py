"""The language-neutral part of reading a model's answer: reasoning set aside, fenced
blocks, content ids, how a language's code sits in an answer (:class:`AnswerSyntax`),
the specification's blocks, and why a candidate was rejected.

Each language plug-in reads its own code out of an answer with these (its
``answers.py``); the LLM layer (:mod:`veriscale.llm.parsers`) builds on both. They
live below both so that a plug-in never imports the LLM layer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from veriscale.backends.base import Spec
from veriscale.benchmark.model import Signature


class ParseError(ValueError):
    """The answer holds nothing usable."""


def stable_id(prefix: str, *parts: str) -> str:
    """``prefix-`` + 16 hex digits of sha256 over ``parts``: the same code, the same id."""
    h = hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]
    return f"{prefix}-{h}"


def spec_id(spec: Spec) -> str:
    return stable_id(
        "spec",
        spec.precond or "<gt>",
        spec.precond_aux,
        spec.postcond or "<gt>",
        spec.postcond_aux,
        spec.imports,
    )


def adversary_id(code: str) -> str:
    return stable_id("adv", code.strip())


# ---------------------------------------------------------------------- reasoning

_REASONING_TAG = r"(?:think|thinking|reasoning|thought)"


_REASONING_BLOCK = re.compile(rf"<({_REASONING_TAG})\b[^>]*>.*?</\1\s*>", re.S | re.I)


_REASONING_OPEN = re.compile(rf"<{_REASONING_TAG}\b[^>]*>", re.I)


_REASONING_CLOSE = re.compile(rf"</{_REASONING_TAG}\s*>", re.I)


def split_reasoning(text: str) -> tuple[str, str]:
    """(answer, reasoning): ``<think>``/``<reasoning>`` blocks set aside.

    A closing tag without its opening (servers that strip the opening tag)
    makes everything before it reasoning; an opening tag never closed (cut
    while thinking) makes everything after it reasoning.
    """
    reasoning = [m.group(0) for m in _REASONING_BLOCK.finditer(text)]
    rest = _REASONING_BLOCK.sub("", text)
    closes = list(_REASONING_CLOSE.finditer(rest))
    if closes:
        reasoning.append(rest[: closes[-1].start()])
        rest = rest[closes[-1].end() :]
    opened = _REASONING_OPEN.search(rest)
    if opened:
        reasoning.append(rest[opened.end() :])
        rest = rest[: opened.start()]
    return rest.strip("\n"), "\n".join(reasoning)


def answer_text(text: str) -> str:
    """The answer without its reasoning blocks (idempotent)."""
    return split_reasoning(text or "")[0]


# ---------------------------------------------------------------------- fences

_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*$", re.MULTILINE)


def fenced_blocks(text: str, languages: tuple[str, ...] = ()) -> list[tuple[str, bool]]:
    """(content, closed) of fenced blocks, in order; an unterminated last fence runs to
    the end (``closed`` False: the answer was cut inside it).

    With ``languages``, blocks tagged with another language are skipped (untagged
    blocks are kept). No fences at all: the whole text is the one (open) block.
    """
    marks = list(_FENCE.finditer(text))
    if not marks:
        return [(text, False)]
    blocks: list[tuple[str, bool]] = []
    i = 0
    while i < len(marks):
        start = marks[i]
        end = marks[i + 1] if i + 1 < len(marks) else None
        tag = start.group(1).lower()
        body = text[start.end() + 1 : end.start() if end else len(text)]
        if not languages or not tag or tag in languages:
            blocks.append((body, end is not None))
        i += 2
    return blocks


def code_blocks(text: str, languages: tuple[str, ...] = ()) -> list[str]:
    """Contents of fenced blocks (see :func:`fenced_blocks`)."""
    return [body for body, _ in fenced_blocks(text, languages)]


def drop_markdown_lines(code: str) -> str:
    """Remove markdown headings (``# ...``, ``## ...``) that models put inside code."""
    return "\n".join(line for line in code.splitlines() if not re.match(r"^#{1,6}\s", line))


# ---------------------------------------------------------------------- answer syntax

Helper = tuple[str, str]  # (name, source) of a non-main definition


@dataclass(frozen=True)
class AnswerSyntax:
    """How one language's code sits in a model's answer (a plug-in's ``answer_syntax``)."""

    fences: tuple[str, ...]  # fence tags of the language (untagged fences are read too)
    comment: str  # the line-comment opener that starts a marker line
    markdown_headings: bool  # ``# Heading`` lines inside code are markdown, not code
    defined_names: Callable[[str], set[str]]  # names a piece of code defines
    adversaries_from: Callable[[str, Signature], tuple[list[str], list[str], list[Helper]]]
    """(adversary sources, problems, helpers) of one chunk of a red-team answer; a
    problem is a :class:`Rejection` (a plain ``str`` counts as malformed)."""


def binder_mapping(got: list[str], want: list[str], what: str) -> list[tuple[str, str]]:
    """Renames that make a definition written with parameter names ``got`` work with
    the task's names ``want``; raises when it cannot."""
    if len(got) != len(want):
        raise ParseError(f"{what} has {len(got)} parameters, expected {len(want)} ({want})")
    mapping = [(g, w) for g, w in zip(got, want, strict=True) if g != w]
    if any(g in want for g, _ in mapping):
        raise ParseError(f"{what} uses parameter names {got} in another order than {want}")
    return mapping


# ---------------------------------------------------------------------- specs

IDENTIFIER = re.compile(r"[^\W\d][\w']*")


def _artefact_blocks(text: str, syntax: AnswerSyntax, wanted: tuple[str, ...]
                     ) -> list[tuple[str, bool]]:
    """The fenced blocks that make up the requested artefact.

    Reasoning is ignored. When several blocks define the artefact (drafts, then the
    final answer) the last one wins; other blocks are kept only when they define
    something the artefact uses (helpers in their own fence), so a usage example or
    a test in an extra fence is never merged into the artefact.
    """
    blocks = fenced_blocks(answer_text(text), syntax.fences)
    if len(blocks) <= 1:
        return blocks
    defs = [syntax.defined_names(b) for b, _ in blocks]
    main = [i for i, d in enumerate(defs) if d & set(wanted)]
    if not main:
        return blocks
    last = main[-1]
    chosen = {last}
    missing = set(wanted) - defs[last]
    for i in reversed(main[:-1]):  # e.g. the precondition in its own, earlier fence
        if defs[i] & missing:
            chosen.add(i)
            missing -= defs[i]
    used = set(IDENTIFIER.findall("\n".join(blocks[i][0] for i in chosen)))
    for i, d in enumerate(defs):
        if i not in chosen and i not in main and d and d & used:
            chosen.add(i)
    return [blocks[i] for i in sorted(chosen)]


def spec_code(text: str, syntax: AnswerSyntax, wanted: tuple[str, ...] = (),
              truncated: bool = False) -> str:
    """The code of the specification in an answer (see :func:`_artefact_blocks`); raises
    when the answer was cut inside it."""
    blocks = _artefact_blocks(text, syntax, wanted) if wanted else fenced_blocks(
        answer_text(text), syntax.fences)
    if truncated and blocks and not blocks[-1][1] and len(fenced_blocks(text)) >= 1 \
            and "```" in text and set(wanted) & syntax.defined_names(blocks[-1][0]):
        raise ParseError("the answer was cut (finish_reason=length) inside the specification")
    code = "\n".join(b for b, _ in blocks)
    return drop_markdown_lines(code) if syntax.markdown_headings else code


def with_id(spec: Spec) -> Spec:
    """``spec`` with its content id."""
    return Spec(
        precond=spec.precond, postcond=spec.postcond, precond_aux=spec.precond_aux,
        postcond_aux=spec.postcond_aux, imports=spec.imports, id=spec_id(spec),
        origin=spec.origin,
    )


# ---------------------------------------------------------------------- rejections

class Rejection(str):
    """Why one candidate of an answer was dropped: the reason's text, and its
    accounting ``kind`` (``malformed``, ``wrong_signature``, ``truncated``,
    ``unsafe``), set where the reason is found rather than read back from its
    words. A plain ``str`` among rejections counts as ``malformed``."""

    KINDS = ("malformed", "wrong_signature", "truncated", "unsafe")
    kind: str

    def __new__(cls, reason: str, kind: str = "malformed") -> Rejection:
        if kind not in cls.KINDS:
            raise ValueError(f"unknown rejection kind {kind!r}")
        obj = super().__new__(cls, reason)
        obj.kind = kind
        return obj

    def within(self, prefix: str) -> Rejection:
        """The same rejection, its text after ``prefix`` (e.g. ``chunk 2: ``)."""
        return Rejection(prefix + self, self.kind)


def rejection_kind(reason: str) -> str:
    return reason.kind if isinstance(reason, Rejection) else "malformed"


def main_name_re(fn: str) -> re.Pattern[str]:
    """``F``, ``F3``, ``F_3``: the task function with the red team's index suffix."""
    return re.compile(rf"^{re.escape(fn)}_?(\d*)$")


def rename_ident(code: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w.']){re.escape(old)}(?![\w'])", new, code)
