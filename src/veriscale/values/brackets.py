"""Where a bracket group ends, quotes respected: one scanner for every literal syntax
(Lean's and Python's backslash escapes, Coq's doubled ``""``)."""

from __future__ import annotations


def balanced_end(text: str, start: int = 0, *, quotes: str = "\"'",
                 doubled: bool = False) -> int:
    """Index after the bracket group (``(``, ``[`` or ``{``) that opens at ``start``,
    or -1 when it never closes. Inside a quote (one of ``quotes``) brackets do not
    count; a quote ends at its own character, which a backslash escapes, or with
    ``doubled`` (Coq) a second one right after it does."""
    depth = 0
    quote = ""
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if quote:
            if doubled and c == quote and text[i + 1:i + 2] == quote:
                i += 2
                continue
            if not doubled and c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in quotes:
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1
