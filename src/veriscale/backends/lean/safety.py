"""Screen untrusted Lean (model solutions, LLM specs, adversaries) before it reaches Lean.

A candidate is judged by the same checks as the ground truth only if it cannot
change what those checks mean. The screen reads the source with the real lexer
(:mod:`veriscale.backends.lean.lexer`, so no comment or string can hide code)
and then applies an *allow-list*:

* commands: ``def``, ``theorem``, ``lemma``, ``abbrev``, ``structure``,
  ``inductive``, ``mutual … end``, ``open`` of a few pure namespaces, with the
  modifiers ``private``/``protected``/``nonrec``; every line that starts at
  column 0 must start one of them (or continue one: ``|``, ``where``,
  ``deriving``, ``termination_by``, ``decreasing_by``, a closing bracket);
  every other command keyword we know of is refused wherever it appears;
* attributes: ``@[reducible, simp, inline, …]`` from :data:`ALLOWED_ATTRIBUTES`
  only (no ``instance``, ``command_elab``, ``term_elab``, ``tactic``, ``csimp``,
  ``implemented_by``, ``extern`` …); ``deriving`` only standard handlers;
* no name outside the candidate's own namespace: ``_root_`` is refused, and so is
  any name of the checker's own namespaces (``VS_…``, ``VeriScale…``), and so
  are declarations named like what the checks and the signature refer to
  (``decide``, ``Nat``, ``Int`` …), which would otherwise capture them;
* no proof holes or trust in the compiler (``sorry``, ``admit``, ``axiom``,
  ``native_decide``, ``ofReduceBool``), no ``unsafe``/``partial``/``opaque``,
  no IO, no meta-programming (``Lean``, quotations, ``#`` commands), no
  ``set_option``, no ``«»`` names;
* imports (:func:`check_imports`): the task's own, ``Mathlib``, ``Std``,
  ``Batteries``, ``Plausible``; never ``Lean`` or its submodules.

A specification body (the right-hand side of ``F_precond``/``F_postcond``) and
an opaque value are *terms*: no command at all (``kind="term"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from veriscale.backends.lean.lexer import Lexed, LexError, Token, blank, lex

ALLOWED_COMMANDS = frozenset({"def", "theorem", "lemma", "abbrev", "structure", "inductive",
                              "mutual", "end", "open"})
MODIFIERS = frozenset({"private", "protected", "nonrec"})
# Tokens that may begin a line at column 0 without starting a new command.
# Term keywords are known keywords (never a library's command), so a body written
# from column 0 (``if``/``let``/``match`` ...) is allowed too.
CONTINUATIONS = frozenset({"|", "where", "deriving", "termination_by", "decreasing_by",
                           ")", "]", "}", "⟩", "@", "if", "then", "else", "let", "have", "show",
                           "match", "with", "fun", "do", "return", "for", "in", "by", "calc",
                           "from", "at"})
ALLOWED_ATTRIBUTES = frozenset({"reducible", "simp", "inline", "noinline", "specialize",
                                "irreducible", "semireducible", "macro_inline"})
ALLOWED_DERIVING = frozenset({"Repr", "BEq", "DecidableEq", "Hashable", "Inhabited", "Ord",
                              "Nonempty"})
ALLOWED_OPEN = frozenset({"Std", "Nat", "Int", "List", "Array", "String", "Char", "Option",
                          "Bool", "Function", "Prod", "Fin"})
ALLOWED_IMPORT_ROOTS = frozenset({"Mathlib", "Std", "Batteries", "Plausible"})

# Command keywords of Lean, Std, Batteries, Mathlib, Aesop and Plausible that are
# not allowed: each would start a command wherever it stands.
COMMAND_KEYWORDS = frozenset({
    "axiom", "example", "instance", "class", "opaque", "universe", "variable", "section",
    "namespace", "export", "set_option", "attribute", "macro", "macro_rules", "syntax",
    "elab", "elab_rules", "notation", "notation3", "infix", "infixl", "infixr", "prefix",
    "postfix", "initialize", "builtin_initialize", "declare_syntax_cat", "run_cmd",
    "run_elab", "run_meta", "import", "prelude", "noncomputable", "partial", "unsafe",
    "omit", "include", "local", "scoped", "coinductive", "alias", "irreducible_def",
    "assert_not_exists", "assert_not_imported", "library_note", "add_decl_doc",
    "suppress_compilation", "unseal", "seal", "compile_inductive", "mk_iff_of_inductive_prop",
    "simproc", "dsimproc", "builtin_simproc", "builtin_dsimproc", "simproc_decl",
    "grind_pattern", "recall", "proof_wanted", "register_simp_attr", "register_option",
    "register_builtin_option", "register_label_attr", "declare_config_elab",
    "declare_command_config_elab", "initialize_simps_projections", "declare_aesop_rule_sets",
    "add_aesop_rules", "erase_aesop_rules", "declare_simp_like_tactic", "binder_predicate",
    "unif_hint", "extend_docs", "open_locale", "deriving_handler", "derive_handler",
    "gen_injective_theorems%", "inductive_fixpoint", "coinductive_fixpoint", "tactic",
    "declare_syntax", "register_tactic_tag", "count_heartbeats", "whatsnew",
})

# Names (any part of a dotted name) that give proofs of anything, trust the
# compiler, escape the namespace, do IO or run meta code.
FORBIDDEN_NAMES = {
    "sorry": "uses sorry", "admit": "uses admit", "sorryAx": "uses sorry",
    "native_decide": "trusts the compiler (native_decide)",
    "ofReduceBool": "trusts the compiler (ofReduceBool)", "trustCompiler": "trusts the compiler",
    "implemented_by": "overrides compiled code (implemented_by)",
    "extern": "overrides compiled code (extern)", "csimp": "overrides compiled code (csimp)",
    "IO": "uses IO", "EIO": "uses IO", "BaseIO": "uses IO", "System": "uses the system",
    "Classical": "uses classical choice (undecidable, noncomputable)",
    "dbg_trace": "traces", "dbgTrace": "traces", "Lean": "uses Lean's meta-programming",
    "m!": "uses Lean's message strings", "run_tac": "runs tactic code", "by_elab": "runs an elaborator",
    "_root_": "names something outside the candidate's namespace",
    "axioms": "declares axioms", "Elab": "uses Lean's meta-programming",
    "Meta": "uses Lean's meta-programming", "Macro": "uses Lean's meta-programming",
}

CHECKER_PREFIXES = ("VS_", "VeriScale")
"""Names the checker gives its own namespaces (each unit's ``VS_<task>_<i>``, the
compiled-evaluation prelude's ``VeriScaleCompiledEval``): a candidate naming one could
call another candidate's code or the ground truth's in the same file."""

# Names the generated checks and the task's signature refer to: a candidate
# declaring one would capture them inside its unit (innermost namespace wins).
RESERVED_DECLARATIONS = frozenset({
    "decide", "Decidable", "Nat", "Int", "Char", "String", "List", "Array", "Option", "Bool",
    "Float", "Prod", "Unit", "Prop", "Type", "Sort", "some", "none", "true", "false", "id",
    "Fin", "UInt8", "UInt16", "UInt32", "UInt64", "USize", "Std", "Sum", "Except", "Subtype",
    "Eq", "Ne", "Not", "And", "Or", "Iff", "True", "False", "Exists", "OfNat",
    "OfScientific", "Neg", "Inhabited", "Repr", "BEq", "Hashable", "ToString", "Function",
    "HashMap", "HashSet", "Map", "Set", "Finset", "Multiset", "Rat", "Real", "ite", "dite",
})
# Members of those namespaces that the checks name explicitly (``Nat.zero`` ...).
CHECK_MEMBERS = frozenset({"zero", "succ", "toNat", "map", "toList", "some", "none", "true",
                           "false", "ofNat", "negSucc", "neg", "mk", "decide", "toArray"})
_DECLARING = frozenset({"def", "theorem", "lemma", "abbrev", "structure", "inductive"})


class Rejected(ValueError):
    """Why untrusted source may not reach Lean; ``line`` is 1-based (0: unknown)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(f"line {line}: {message}" if line else message)


def strip_comments_and_literals(source: str) -> str:
    """``source`` with comments blanked and literals replaced by ``""``/``' '`` (lines kept).

    Raises ``ValueError`` (:class:`~veriscale.backends.lean.lexer.LexError`) on source
    the lexer cannot read as Lean would: an unterminated comment or string would
    swallow the rest of the generated file.
    """
    return blank(source)


def _why(tok: Token, message: str) -> Rejected:
    return Rejected(f"`{tok.text}` {message}", tok.line)


def _names(tokens: Sequence[Token]) -> None:
    for tok in tokens:
        if tok.kind == "command":
            raise _why(tok, "is a command")
        if tok.kind == "symbol" and tok.text == "`":
            raise _why(tok, "quotes syntax or names (meta-programming)")
        if tok.kind != "ident":
            continue
        if "«" in tok.text:
            raise _why(tok, "uses «quoted» identifiers")
        for part in tok.parts:
            why = FORBIDDEN_NAMES.get(part)
            if why is None and part.lower().startswith("unsafe"):
                why = "uses unsafe code"
            if why is None and part.startswith(CHECKER_PREFIXES):
                why = ("names the checker's own namespaces (another unit's, the ground "
                       "truth's or the prelude's)")
            if why is not None:
                raise _why(tok, why)


def _bracket(tokens: Sequence[Token], at: int, close: str) -> int:
    """Index of the token closing the bracket opened at ``at``."""
    opener, depth = tokens[at].text, 0
    for j in range(at, len(tokens)):
        if tokens[j].kind == "symbol" and tokens[j].text == opener:
            depth += 1
        elif tokens[j].kind == "symbol" and tokens[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    raise Rejected(f"unclosed {opener!r}", tokens[at].line)


def _attributes(tokens: Sequence[Token], term: bool) -> None:
    for i, tok in enumerate(tokens):
        if not (tok.kind == "symbol" and tok.text == "@" and i + 1 < len(tokens)
                and tokens[i + 1].text == "[" and tokens[i + 1].start == tok.end):
            continue
        if term:
            raise _why(tok, "sets attributes inside a term")
        end = _bracket(tokens, i + 1, "]")
        inner = tokens[i + 2 : end]
        groups: list[list[Token]] = [[]]
        for t in inner:
            if t.kind == "symbol" and t.text == ",":
                groups.append([])
            else:
                groups[-1].append(t)
        for g in groups:
            if len(g) != 1 or g[0].kind != "ident" or g[0].text not in ALLOWED_ATTRIBUTES:
                text = " ".join(t.text for t in g) or "(empty)"
                raise Rejected(f"attribute @[{text}] is not allowed", tok.line)


def _structure(tokens: Sequence[Token], term: bool) -> None:
    """Commands: only allowed ones, at allowed places; ``end`` only closes ``mutual``."""
    open_mutual = 0
    for i, tok in enumerate(tokens):
        if tok.kind != "ident":
            if tok.col == 0 and not term and tok.text not in CONTINUATIONS and \
                    (i == 0 or tokens[i - 1].line != tok.line):
                raise Rejected(f"a line starting with `{tok.text}` at column 0 starts no "
                               "allowed command (indent continuation lines)", tok.line)
            continue
        word = tok.text
        if word in COMMAND_KEYWORDS:
            raise _why(tok, "is a command or modifier that is not allowed")
        if term and (word in ALLOWED_COMMANDS or word in MODIFIERS or word == "deriving"):
            raise _why(tok, "starts a command inside a term")
        first_on_line = i == 0 or tokens[i - 1].line != tok.line
        if not term and tok.col == 0 and first_on_line and word not in ALLOWED_COMMANDS \
                and word not in MODIFIERS and word not in CONTINUATIONS:
            raise Rejected(f"a line starting with `{word}` at column 0 starts no allowed "
                           "command (indent continuation lines)", tok.line)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if word == "mutual":
            open_mutual += 1
        elif word == "end":
            if open_mutual == 0:
                raise _why(tok, "outside a `mutual` block (could leave the unit's namespace)")
            if nxt is not None and nxt.kind == "ident" and nxt.line == tok.line:
                raise _why(tok, "names a namespace or section")
            open_mutual -= 1
        elif word == "open":
            k = i + 1
            while k < len(tokens) and tokens[k].line == tok.line:
                t = tokens[k]
                if t.kind != "ident" or t.text not in ALLOWED_OPEN:
                    raise Rejected(f"`open` may name only {', '.join(sorted(ALLOWED_OPEN))}; "
                                   f"got `{t.text}`", tok.line)
                k += 1
            if k == i + 1:
                raise _why(tok, "names no namespace")
        elif word == "deriving":
            k = i + 1
            while k < len(tokens) and tokens[k].line == tok.line:
                t = tokens[k]
                if not (t.text == "," or (t.kind == "ident" and t.text in ALLOWED_DERIVING)):
                    raise Rejected(f"deriving `{t.text}` is not allowed", tok.line)
                k += 1
        elif word in _DECLARING and nxt is not None and nxt.kind == "ident":
            parts = nxt.parts
            if parts[0] in RESERVED_DECLARATIONS and (len(parts) == 1
                                                      or parts[-1] in CHECK_MEMBERS):
                raise Rejected(f"declares `{nxt.text}`, a name the checks rely on", nxt.line)
    if open_mutual:
        raise Rejected("unclosed `mutual` block")


def screen(source: str, kind: str = "commands") -> Lexed:
    """Lex and screen ``source``; returns the tokens or raises :class:`Rejected`/LexError.

    ``kind``: ``"commands"`` (aux definitions, an implementation) or ``"term"``
    (a specification body, a value).
    """
    if kind not in ("commands", "term"):
        raise ValueError(f"kind must be commands or term, got {kind!r}")
    lexed = lex(source)
    term = kind == "term"
    _structure(lexed.tokens, term)
    _attributes(lexed.tokens, term)
    _names(lexed.tokens)
    _names(lexed.embedded)
    for tok in lexed.embedded:
        if tok.kind == "ident" and tok.text in COMMAND_KEYWORDS | ALLOWED_COMMANDS:
            raise _why(tok, "is a command inside a string's braces")
    return lexed


def check_untrusted_lean(source: str, kind: str = "commands") -> str | None:
    """``None`` when ``source`` may be compiled next to the ground truth, else
    ``"rejected: ..."`` saying why."""
    try:
        screen(source, kind)
    except LexError as exc:
        return f"rejected: {exc}"
    except Rejected as exc:
        return f"rejected: {exc}"
    return None


def import_modules(text: str) -> list[str]:
    """The modules an ``imports`` text names; raises :class:`Rejected` for anything
    in it that is not an ``import`` of plain module names."""
    try:
        tokens = lex(text).tokens
    except LexError as exc:
        raise Rejected(str(exc.reason), exc.line) from exc
    mods: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind != "ident" or tok.text != "import":
            raise Rejected(f"imports may hold only `import` lines; got `{tok.text}`", tok.line)
        i += 1
        names = 0
        while i < len(tokens) and tokens[i].kind == "ident" and tokens[i].text != "import" \
                and tokens[i].line == tok.line:
            if "«" in tokens[i].text:
                raise _why(tokens[i], "uses «quoted» identifiers")
            mods.append(tokens[i].text)
            names += 1
            i += 1
        if not names:
            raise Rejected("`import` names no module", tok.line)
    return mods


def check_imports(text: str, task_imports: Iterable[str] = ()) -> str | None:
    """``None`` when every module ``text`` imports is the task's own or under
    ``Mathlib``/``Std``/``Batteries``/``Plausible``; else ``"rejected: ..."``."""
    own = set(task_imports)
    try:
        mods = import_modules(text)
    except Rejected as exc:
        return f"rejected: {exc}"
    for m in mods:
        if m in own:
            continue
        root = m.split(".", 1)[0]
        if root not in ALLOWED_IMPORT_ROOTS:
            return (f"rejected: import {m} is not allowed (only the task's imports and "
                    f"{', '.join(sorted(ALLOWED_IMPORT_ROOTS))})")
    return None
