"""The one Coq lexer: sentences, with comments and string literals understood.

Coq ends a sentence at a ``.`` followed by white space (or the end of the
text), never inside a nested ``(* comment *)`` or a ``"string"`` (whose quote
is escaped by doubling). The screen, the ``Require`` hoisting and the
conjunct splitter all read Coq through this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Sentence:
    text: str  # the sentence without its final dot; comments replaced by a space
    raw: str  # the exact source text, final dot included
    line: int  # 1-based line where the sentence starts
    words: tuple[str, ...]  # identifier-like tokens outside strings and comments
    start: int = 0  # offset of the sentence's first non-blank character in the source
    end: int = 0  # offset just after its final dot


class LexError(ValueError):
    """An unterminated comment or string."""


_WORD = re.compile(r"[A-Za-z_][\w']*(?:\.[A-Za-z_][\w']*)*|#\[|\S")


def strip_comments(text: str) -> str:
    """``text`` with every comment blanked out, offsets kept (strings kept); raises
    :class:`LexError`."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("(*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("(*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*)", j):
                    depth, j = depth - 1, j + 2
                elif text[j] == '"':
                    j = _string_end(text, j)
                else:
                    j += 1
            if depth:
                raise LexError("unterminated comment")
            out.append("".join(c if c == "\n" else " " for c in text[i:j]))
            i = j
        elif text[i] == '"':
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _string_end(text: str, i: int) -> int:
    j = i + 1
    while True:
        k = text.find('"', j)
        if k < 0:
            raise LexError("unterminated string literal")
        if text.startswith('""', k):
            j = k + 2
            continue
        return k + 1


def words_of(text: str) -> list[str]:
    """Identifier-like words of comment-free ``text``, strings left out."""
    out: list[str] = []
    for m in re.finditer(r'"(?:[^"]|"")*"|' + _WORD.pattern, text):
        tok = m.group(0)
        if not tok.startswith('"'):
            out.append(tok)
    return out


def sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` (a trailing sentence without a dot is kept too)."""
    clean = strip_comments(text)
    out: list[Sentence] = []
    start, i, n = 0, 0, len(clean)
    while i < n:
        c = clean[i]
        if c == '"':
            i = _string_end(clean, i)
            continue
        if c == "." and (i + 1 == n or clean[i + 1].isspace()) and not clean.startswith("..", i - 1):
            body = clean[start:i]
            if body.strip():
                out.append(_sentence(body, text[start:i + 1], clean, start))
            start = i + 1
        i += 1
    if clean[start:].strip():
        out.append(_sentence(clean[start:], text[start:], clean, start))
    return out


def _sentence(body: str, raw: str, clean: str, start: int) -> Sentence:
    lead = len(body) - len(body.lstrip())
    line = clean.count("\n", 0, start + lead) + 1
    return Sentence(body.strip(), raw[lead:], line, tuple(words_of(body)), start + lead,
                    start + len(raw))


def split_conjuncts(expr: str) -> list[str]:
    """Top-level ``&&`` operands of a bool expression: the conjuncts a weakening
    may drop. ``&&`` binds tighter than ``||``, so a top-level ``||`` means no
    split; an ``if``/``match``/``let``/``fun`` reaches to the end, so it is one
    operand with everything after it."""
    clean = strip_comments(expr).strip()
    while clean.startswith("(") and _closing(clean, 0) == len(clean) - 1:
        clean = clean[1:-1].strip()
    parts: list[str] = []
    depth, start, i = 0, 0, 0
    while i < len(clean):
        c = clean[i]
        if c == '"':
            i = _string_end(clean, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            if clean.startswith("||", i):
                return [clean]
            if clean.startswith("&&", i):
                parts.append(clean[start:i].strip())
                start = i = i + 2
                continue
            if (i == 0 or not (clean[i - 1].isalnum() or clean[i - 1] in "_'")) and \
                    re.match(r"(if|match|let|fun|forall|exists)\b", clean[i:]):
                break
        i += 1
    parts.append(clean[start:].strip())
    return [p for p in parts if p]


def _closing(text: str, i: int) -> int:
    depth = 0
    j = i
    while j < len(text):
        c = text[j]
        if c == '"':
            j = _string_end(text, j)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return -1
