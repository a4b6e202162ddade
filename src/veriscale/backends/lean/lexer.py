"""A Lean 4 lexer for screening untrusted source: where tokens, strings and comments are.

The screen (:mod:`veriscale.backends.lean.safety`) is only as good as its
agreement with Lean on one question: which characters are code. So this lexer
follows Lean's own tokenizer on everything that moves that boundary, and
refuses (:class:`LexError`) whatever it cannot read exactly as Lean would:

* ``--`` line comments and nested ``/- -/`` block comments (doc comments too);
* ``"…"`` strings with Lean's escapes only (``\\\\ \\" \\' \\n \\t \\r \\xHH
  \\uHHHH`` and the ``\\``-newline gap); any other escape is refused, since
  Lean's error recovery after a bad escape resumes somewhere we cannot predict;
* raw strings ``r"…"``, ``r#"…"#`` (no escapes inside: ``r"\\"`` is one
  backslash), started only by a token that is exactly ``r``;
* interpolated strings after the ``s!`` / ``f!`` tokens: the code in ``{…}`` is
  lexed as code (nesting included) and its tokens are part of the stream, so
  ``s!"{(sorry : Nat)}"`` shows its ``sorry``. A plain string holding ``{`` right
  after a single word (a library keyword such as ``throwError`` might make it
  interpolated) is also read as if interpolated: when the two readings end in
  different places it is refused, else the code of the second reading is kept
  in :attr:`Lexed.embedded` for the screen;
* char literals (``'a'``, ``'\\n'``, ``'\\x41'``), started where Lean starts
  one: a ``'`` at the beginning of a token;
* identifiers with ``«…»`` parts, ``!``/``?``/``'`` and subscripts, dotted names.

A comment opener glued to a symbol character (``<--``, ``+/-``) is refused:
Lean matches multi-character symbols first (``<-`` then ``-``), so the two
readings could differ.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

# Tokens of Lean's core (Init) that take an interpolated string. ``m!`` is not here:
# it is a token only when ``Lean`` is imported, so the screen refuses it outright.
INTERPOLATING = frozenset({"s!", "f!"})
_ESCAPES = frozenset('\\"\'ntr')
_HEX = frozenset("0123456789abcdefABCDEF")
# After one of these, "--" or "/-" may be part of a longer symbol token in Lean.
_GLUE = frozenset("!#$%&*+,-./:;<=>?@\\^|~")


class LexError(ValueError):
    """Source this lexer cannot read exactly as Lean would; ``line`` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.reason = message
        self.line = line


@dataclass(frozen=True)
class Token:
    """One token. ``kind``: ident, command (``#word``), string, char, number, symbol.

    ``text`` is the source text (for strings: the whole literal, or for an
    interpolated string one literal piece); ``line``/``col`` are 1-/0-based.
    """

    kind: str
    text: str
    start: int
    end: int
    line: int
    col: int

    @property
    def parts(self) -> list[str]:
        """An identifier's dot-separated parts, ``«»`` removed."""
        return [p[1:-1] if p.startswith("«") else p for p in _split_ident(self.text)]


@dataclass(frozen=True)
class Lexed:
    """Tokens and the spans of comments and literals (for blanking them)."""

    tokens: list[Token]
    comments: list[tuple[int, int]]
    literals: list[tuple[int, int]]
    embedded: list[Token]  # code a plain string would hold if it were interpolated


def _is_letter_like(c: str) -> bool:
    o = ord(c)
    return ((0x3B1 <= o <= 0x3C9 and o != 0x3BB) or (0x391 <= o <= 0x3A9 and o not in (0x3A0, 0x3A3))
            or 0x3CA <= o <= 0x3FB or 0x1F00 <= o <= 0x1FFE or 0x2100 <= o <= 0x214F
            or 0x1D49C <= o <= 0x1D59F)


def _is_sub(c: str) -> bool:
    o = ord(c)
    return 0x2080 <= o <= 0x2089 or 0x2090 <= o <= 0x209C or 0x1D62 <= o <= 0x1D6A


def is_id_first(c: str) -> bool:
    return (c.isascii() and c.isalpha()) or c == "_" or _is_letter_like(c)


def is_id_rest(c: str) -> bool:
    return (c.isascii() and c.isalnum()) or c in "_'!?" or _is_letter_like(c) or _is_sub(c)


def _split_ident(text: str) -> list[str]:
    parts, cur, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == "«":
            j = text.index("»", i)
            cur += text[i : j + 1]
            i = j + 1
            continue
        if c == ".":
            parts.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    parts.append(cur)
    return parts


class _Lexer:
    def __init__(self, src: str) -> None:
        self.src = src
        self.n = len(src)
        self.line_starts = [0] + [i + 1 for i, c in enumerate(src) if c == "\n"]
        self.tokens: list[Token] = []
        self.comments: list[tuple[int, int]] = []
        self.literals: list[tuple[int, int]] = []
        self.embedded: list[Token] = []

    # -- positions
    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self.line_starts, pos)

    def col_of(self, pos: int) -> int:
        return pos - self.line_starts[self.line_of(pos) - 1]

    def fail(self, message: str, pos: int) -> LexError:
        return LexError(message, self.line_of(pos))

    def emit(self, kind: str, start: int, end: int) -> None:
        self.tokens.append(Token(kind, self.src[start:end], start, end, self.line_of(start),
                                 self.col_of(start)))

    # -- trivia
    def skip_trivia(self, i: int) -> int:
        src, n = self.src, self.n
        while i < n:
            c = src[i]
            if c in " \n\r":
                i += 1
            elif c == "\t":
                raise self.fail("tab character (Lean rejects tabs)", i)
            elif src.startswith("--", i) or src.startswith("/-", i):
                if i > 0 and src[i - 1] in _GLUE:
                    raise self.fail(f"comment opener glued to {src[i - 1]!r} (ambiguous)", i)
                i = self.comment(i)
            else:
                break
        return i

    def comment(self, i: int) -> int:
        src = self.src
        if src.startswith("--", i):
            j = src.find("\n", i)
            j = self.n if j < 0 else j
        else:
            depth, j = 1, i + 2
            while j < self.n and depth:
                if src.startswith("/-", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("-/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                raise self.fail("unterminated block comment", i)
        self.comments.append((i, j))
        return j

    # -- literals
    def escape(self, i: int, interpolated: bool) -> int:
        """``i`` at the backslash; returns the index after the escape."""
        src = self.src
        if i + 1 >= self.n:
            raise self.fail("unterminated escape", i)
        c = src[i + 1]
        if c in _ESCAPES or (interpolated and c == "{"):
            return i + 2
        if c == "x":
            if all(ch in _HEX for ch in src[i + 2 : i + 4]) and len(src[i + 2 : i + 4]) == 2:
                return i + 4
        elif c == "u":
            if all(ch in _HEX for ch in src[i + 2 : i + 6]) and len(src[i + 2 : i + 6]) == 4:
                return i + 6
        elif c == "\n" or (c == "\r" and src.startswith("\r\n", i + 1)):
            return i + 2
        raise self.fail(f"escape \\{c} is not one Lean knows", i)

    def string(self, i: int) -> int:
        """A plain string from the opening quote; returns the index after it."""
        src, j = self.src, i + 1
        while j < self.n:
            c = src[j]
            if c == '"':
                if "{" in src[i:j] and self.could_interpolate():
                    self.second_reading(i, j + 1)
                self.literals.append((i, j + 1))
                self.emit("string", i, j + 1)
                return j + 1
            j = self.escape(j, False) if c == "\\" else j + 1
        raise self.fail("unterminated string literal", i)

    def could_interpolate(self) -> bool:
        """Could the token before a string be a library keyword taking an interpolated
        string (``throwError``, ``trace[c]``)? Keywords are single words; a dotted
        name or a symbol never is one."""
        prev = self.tokens[-1] if self.tokens else None
        if prev is None:
            return False
        return (prev.kind == "ident" and "." not in prev.text) or prev.text == "]"

    def second_reading(self, start: int, end: int) -> None:
        """Read ``src[start:end]`` as an interpolated string too; refuse a different end."""
        other = _Lexer.__new__(_Lexer)
        other.src, other.n, other.line_starts = self.src, self.n, self.line_starts
        other.tokens, other.comments, other.literals, other.embedded = [], [], [], []
        try:
            got = other.interpolated(start)
        except LexError:
            got = -1
        if got != end:
            raise self.fail("braces in a string literal could be read as interpolation "
                            "(ambiguous)", start)
        self.embedded.extend(t for t in other.tokens if t.kind != "string")
        self.embedded.extend(other.embedded)

    def raw_string(self, i: int) -> int:
        """``r#*"…"#*`` from the ``r``; no escapes inside."""
        src, j = self.src, i + 1
        hashes = 0
        while j < self.n and src[j] == "#":
            hashes, j = hashes + 1, j + 1
        if j >= self.n or src[j] != '"':
            raise self.fail("malformed raw string literal", i)
        close = '"' + "#" * hashes
        end = src.find(close, j + 1)
        if end < 0:
            raise self.fail("unterminated raw string literal", i)
        self.literals.append((i, end + len(close)))
        self.emit("string", i, end + len(close))
        return end + len(close)

    def interpolated(self, i: int) -> int:
        """An interpolated string from its quote; ``{…}`` parts are lexed as code."""
        src, j, piece = self.src, i + 1, i
        while j < self.n:
            c = src[j]
            if c == "\\":
                j = self.escape(j, True)
            elif c == '"':
                self.literals.append((piece, j + 1))
                self.emit("string", piece, j + 1)
                return j + 1
            elif c == "{":
                self.literals.append((piece, j + 1))
                self.emit("string", piece, j + 1)
                j = self.code(j + 1, stop_at_brace=True)  # returns after the closing brace
                piece = j - 1
            else:
                j += 1
        raise self.fail("unterminated interpolated string", i)

    def char(self, i: int) -> int:
        src = self.src
        j = i + 1
        if j >= self.n or src[j] in "\n'":
            raise self.fail("malformed character literal", i)
        j = self.escape(j, False) if src[j] == "\\" else j + 1
        if j >= self.n or src[j] != "'":
            raise self.fail("malformed character literal", i)
        self.literals.append((i, j + 1))
        self.emit("char", i, j + 1)
        return j + 1

    # -- identifiers and numbers
    def ident(self, i: int) -> int:
        src, j = self.src, i
        while True:
            if j < self.n and src[j] == "«":
                end = src.find("»", j + 1)
                if end < 0:
                    raise self.fail("unterminated «name»", j)
                j = end + 1
            elif j < self.n and is_id_first(src[j]):
                j += 1
                while j < self.n and is_id_rest(src[j]):
                    j += 1
            else:
                raise self.fail("malformed identifier", j)
            if j + 1 < self.n and src[j] == "." and (is_id_first(src[j + 1]) or src[j + 1] == "«"):
                j += 1
                continue
            return j

    def number(self, i: int) -> int:
        src, j = self.src, i
        if src.startswith(("0x", "0X", "0b", "0B", "0o", "0O"), i):
            j = i + 2
            while j < self.n and (src[j] in _HEX or src[j] == "_"):
                j += 1
            return j
        while j < self.n and (src[j].isascii() and src[j].isdigit()):
            j += 1
        if j + 1 < self.n and src[j] == "." and src[j + 1].isascii() and src[j + 1].isdigit():
            j += 1
            while j < self.n and src[j].isascii() and src[j].isdigit():
                j += 1
        if j < self.n and src[j] in "eE":
            k = j + 1
            if k < self.n and src[k] in "+-":
                k += 1
            if k < self.n and src[k].isascii() and src[k].isdigit():
                j = k
                while j < self.n and src[j].isascii() and src[j].isdigit():
                    j += 1
        return j

    # -- the main loop
    def code(self, i: int, stop_at_brace: bool = False) -> int:
        """Lex code from ``i``; with ``stop_at_brace``, up to and including the ``}``
        that closes an interpolation (returns the index after it)."""
        src = self.src
        depth = 0
        while True:
            i = self.skip_trivia(i)
            if i >= self.n:
                if stop_at_brace:
                    raise self.fail("unterminated interpolation", i)
                return i
            c = src[i]
            if c == '"':
                prev = self.tokens[-1] if self.tokens else None
                if prev is not None and prev.kind == "ident" and prev.text in INTERPOLATING:
                    i = self.interpolated(i)
                    continue
                if prev is not None and prev.kind == "ident" and prev.text.endswith("!") \
                        and prev.end == i:
                    raise self.fail(f"string glued to {prev.text} (interpolation is ambiguous)", i)
                i = self.string(i)
            elif c == "'":
                i = self.char(i)
            elif c == "r" and i + 1 < self.n and src[i + 1] in '"#':
                i = self.raw_string(i)
            elif is_id_first(c) or c == "«":
                j = self.ident(i)
                self.emit("ident", i, j)
                i = j
            elif c.isascii() and c.isdigit():
                j = self.number(i)
                self.emit("number", i, j)
                i = j
            elif c == "#" and i + 1 < self.n and is_id_first(src[i + 1]):
                j = i + 1
                while j < self.n and is_id_rest(src[j]):
                    j += 1
                self.emit("command", i, j)
                i = j
            elif c == "»":
                raise self.fail("stray '»'", i)
            else:
                if stop_at_brace and c == "{":
                    depth += 1
                elif stop_at_brace and c == "}":
                    if depth == 0:
                        return i + 1
                    depth -= 1
                self.emit("symbol", i, i + 1)
                i += 1


def lex(source: str) -> Lexed:
    """Tokens of ``source`` with comment and literal spans; raises :class:`LexError`."""
    lx = _Lexer(source)
    lx.code(0)
    return Lexed(lx.tokens, lx.comments, lx.literals, lx.embedded)


def tokenize(source: str) -> list[Token]:
    return lex(source).tokens


def blank(source: str, lexed: Lexed | None = None, keep_strings: bool = False) -> str:
    """``source`` with comments replaced by spaces and (unless ``keep_strings``)
    literals by ``""`` / ``' '``; line breaks are kept, so line numbers still match."""
    lexed = lexed or lex(source)
    spans = [(a, b, "comment") for a, b in lexed.comments]
    if not keep_strings:
        spans += [(a, b, "literal") for a, b in lexed.literals]
    out: list[str] = []
    at = 0
    for a, b, what in sorted(spans):
        if a < at:  # a piece inside an interpolation already blanked
            continue
        out.append(source[at:a])
        inner = source[a:b]
        newlines = "\n" * inner.count("\n")
        if what == "comment":
            out.append((" " if inner.startswith("/-") else "") + newlines)
        elif inner.startswith("'"):
            out.append("' '")
        else:
            out.append('""' + newlines)
        at = b
    out.append(source[at:])
    return "".join(out)


def strip_comments(source: str, lexed: Lexed | None = None) -> str:
    """``source`` without its comments: a ``--`` comment goes up to its line break, a
    ``/- -/`` comment leaves only its line breaks; strings and chars stay intact.
    Raises :class:`LexError` where :func:`lex` does."""
    lexed = lexed or lex(source)
    out: list[str] = []
    at = 0
    for a, b in sorted(lexed.comments):
        if a < at:
            continue
        out.append(source[at:a])
        out.append("\n" * source.count("\n", a, b))
        at = b
    out.append(source[at:])
    return "".join(out)


def strip_comments_or_keep(source: str) -> str:
    """:func:`strip_comments`, or ``source`` as it is where the lexer cannot read it
    (model answers: the screen refuses such code later, with the lexer's reason)."""
    try:
        return strip_comments(source)
    except LexError:
        return source
