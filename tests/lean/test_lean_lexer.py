"""The Lean lexer: where code is, exactly as Lean reads it (or a refusal)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veriscale.backends.lean.lexer import LexError, blank, lex, tokenize
from veriscale.benchmark.verina import notation


def texts(src: str) -> list[str]:
    return [t.text for t in tokenize(src)]


def test_raw_strings_have_no_escapes() -> None:
    src = 'def s := r"\\"\naxiom cheat : False\n"\\""'
    assert texts(src)[4:] == ['r"\\"', "axiom", "cheat", ":", "False", '"\\""']
    assert texts('r#"a"b"# q') == ['r#"a"b"#', "q"]
    assert texts('r##"x"#y"## z') == ['r##"x"#y"##', "z"]
    assert texts('xr"a"') == ["xr", '"a"']  # only a token that is exactly `r` starts one
    with pytest.raises(LexError):
        lex('r#"never closed"')


def test_interpolation_is_code() -> None:
    assert "sorry" in texts('s!"{(sorry : Nat)}"')
    assert texts('s!"a{s!"b{x}"}c" ++ y')[-3:] == ["+", "+", "y"]
    assert "sorry" in texts('f! "{ {a := sorry}.a }"')  # whitespace before the quote
    assert texts('s!"\\{not code}"') == ["s!", '"\\{not code}"']
    assert texts('x = "{" ∨ s.startsWith "{"')[-1] == '"{"'  # no keyword could precede
    with pytest.raises(LexError):
        lex('s!"{x"')


def test_comments_nest_and_strings_hide_nothing() -> None:
    assert texts("/- a /- b -/ axiom -/ def") == ["def"]
    assert texts("x -- axiom\ny") == ["x", "y"]
    assert texts('"-- not a comment" z') == ['"-- not a comment"', "z"]
    assert texts("/-- doc -/ def f := 1")[0] == "def"
    with pytest.raises(LexError):
        lex("/- /- -/ never closed")


def test_chars_and_names() -> None:
    assert texts("c = '\"' ∨ c = '\\''")[2] == "'\"'"
    assert texts("x' := 'a'") == ["x'", ":", "=", "'a'"]
    assert texts("'\\x41' '\\u0041'") == ["'\\x41'", "'\\u0041'"]
    assert texts('def «a"b».c := 1')[1] == ['def', '«a"b».c'][1]
    assert tokenize("Foo.«bar baz».q")[0].parts == ["Foo", "bar baz", "q"]
    assert texts("h₁ α get! ok?") == ["h₁", "α", "get!", "ok?"]
    for bad in ("'ab'", "''", "'\\q'", "«open"):
        with pytest.raises(LexError):
            lex(bad)


def test_refuses_what_lean_might_read_otherwise() -> None:
    for bad in ('"\\q"',  # unknown escape: Lean's error recovery resumes who knows where
                "x <-- y",  # Lean reads `<-` then `-`, not a comment
                'throwError "{" axiom "}"',  # braces a library token might interpolate
                'panic!"{x"',  # a string glued to a `!` token
                "def f :=\tx"):  # tabs
        with pytest.raises(LexError):
            lex(bad)


def test_commands_and_numbers() -> None:
    toks = tokenize("#eval 1.5e3 #[0x1F]")
    assert [(t.kind, t.text) for t in toks] == [
        ("command", "#eval"), ("number", "1.5e3"), ("symbol", "#"), ("symbol", "["),
        ("number", "0x1F"), ("symbol", "]")]
    assert tokenize("a\n  b")[1].line == 2 and tokenize("a\n  b")[1].col == 2


def test_blank_keeps_lines() -> None:
    src = 'a /- x\ny -/ b\n"s\\"t" -- c\nd\n"multi\nline"'
    out = blank(src)
    assert out.count("\n") == src.count("\n")
    assert out == 'a  \n b\n"" \nd\n""\n'


@given(st.lists(st.text(max_size=8), max_size=5), st.lists(st.characters(), max_size=3))
def test_rendered_literals_are_one_token(strings: list[str], chars: list[str]) -> None:
    """Whatever VeriScale renders as a Lean literal lexes as exactly that literal."""
    parts = [notation.string_literal(s) for s in strings] + [notation.char_literal(c) for c in chars
                                                 if c not in "\n\r" and c.isprintable()]
    src = " ∧ ".join(["x", *parts])
    toks = tokenize(src)
    lits = [t.text for t in toks if t.kind in ("string", "char")]
    assert lits == parts
    assert blank(src).count("\n") == src.count("\n")
