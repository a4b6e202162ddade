"""The screen for untrusted Coq (model code, LLM specs, adversaries) before ``coqc``.

An allow-list of sentence heads (definitions, inductive types, proofs closed by
``Qed``/``Defined``, scope and import commands of the standard library) and a
deny-list of words anywhere (``Axiom``, ``Admitted``/``admit``, ``Parameter``,
``Extract``, ``Set``/``Unset``, ``Declare ML Module``, ``Load``, ``Redirect``,
``Drop``, output commands that could forge an answer, attributes such as
``#[bypass_check]``). Anything not allowed is refused with the reason.
"""

from __future__ import annotations

import re

from veriscale.backends.coq.lexer import LexError, sentences

DEFINITION_HEADS = frozenset({
    "Definition", "Fixpoint", "Function", "Inductive", "Record", "Structure", "Let",
    "Lemma", "Theorem", "Fact", "Remark", "Corollary", "Proposition", "Example",
    "Scheme", "Open", "Close", "Import", "Export", "Require", "From", "Local",
})
"""Sentence heads allowed outside proofs (``Local`` only before Definition/Open)."""

PROOF_END = frozenset({"Qed", "Defined"})

DENIED_WORDS = frozenset({
    "Axiom", "Axioms", "Admitted", "admit", "give_up", "Abort", "Parameter", "Parameters",
    "Variable", "Variables", "Hypothesis", "Hypotheses", "Conjecture", "Context",
    "Extract", "Extraction", "Set", "Unset", "Declare", "Load", "Redirect", "Drop", "Cd",
    "Add", "Print", "Compute", "Eval", "Check", "Show", "Search", "About", "Locate", "Test",
    "Time", "Timeout", "Fail", "Succeed", "Back", "BackTo", "Reset", "Undo", "Restart",
    "Module", "End", "Section", "Notation", "Infix", "Reserved", "Ltac", "Ltac2", "Tactic",
    "Obligation", "Obligations", "Next", "Admit", "Instance", "Existing", "Canonical",
    "Coercion", "Arguments", "Opaque", "Transparent", "Strategy", "Hint", "Typeclasses",
    "native_compute", "Unshelve", "Guarded", "Optimize", "Debug", "Quit", "Info", "Comments",
    "Primitive", "Register", "Universe", "Universes", "Constraint", "Polymorphic",
    "Monomorphic", "Cumulative", "NonCumulative", "Private", "Program", "Equations",
    "QuickChick", "Sample", "Derive", "Include",
})
"""Words refused anywhere in untrusted text (outside strings and comments)."""

ALLOWED_LIBRARIES = frozenset({
    "Bool", "ZArith", "Arith", "List", "Lists.List", "String", "Strings.String", "Ascii",
    "Strings.Ascii", "Nat", "PeanoNat", "Lia", "Psatz", "Znat", "Zdiv", "Zbool", "Zquot",
    "BinInt", "BinNat", "NArith", "Recdef", "Sorting", "Sorted", "Permutation", "Mergesort",
    "Sorting.Permutation", "Sorting.Sorted", "Sorting.Mergesort", "Reals", "Rdefinitions",
    "Rbase", "Rfunctions", "Rbasic_fun", "RIneq",
    "Lra", "Wf", "Wellfounded", "Omega", "EqNat", "Compare_dec", "Peano_dec", "Decidable",
    "Setoid", "Morphisms", "Basics", "Program.Basics", "ListNotations", "List.ListNotations",
    "FunInd", "OrderedType", "Orders", "DecidableType", "ZArith_dec", "Zmax", "Zmin",
    "Zabs", "Zeven", "Zpow_facts", "Zcomplements", "Div2", "Even", "Max", "Min",
})


def _library_ok(name: str) -> bool:
    bare = name[4:] if name.startswith("Coq.") else name
    if bare in ALLOWED_LIBRARIES or bare.rsplit(".", 1)[-1] in ALLOWED_LIBRARIES:
        return not re.search(r"(?i)extraction|ltac|quickchick|ml", bare)
    return False


def screen(text: str, *, where: str = "candidate") -> str | None:
    """``None`` when ``text`` passes, else the first reason it is refused."""
    if "\x00" in text:
        return f"{where}: NUL byte"
    try:
        items = sentences(text)
    except LexError as exc:
        return f"{where}: {exc}"
    in_proof = False
    for s in items:
        words = s.words
        if not words:
            continue
        if "#[" in words or re.search(r"#\[", s.text):
            return f"{where}: line {s.line}: attributes (#[...]) are not allowed"
        for w in words:
            if w in DENIED_WORDS:
                return f"{where}: line {s.line}: {w!r} is not allowed"
            if w.split(".")[0] == "Ltac2":  # pragma: no cover - caught above
                return f"{where}: line {s.line}: Ltac2 is not allowed"
            if _reserved(w):
                return f"{where}: line {s.line}: {w!r} names the checker's own modules"
        head = words[0]
        if in_proof:
            if head in PROOF_END:
                if len(words) != 1:
                    return f"{where}: line {s.line}: malformed {head}"
                in_proof = False
            elif head in DEFINITION_HEADS - {"Open", "Close", "Local"} and head != "Proof":
                return f"{where}: line {s.line}: {head} inside an open proof"
            continue
        if head == "Proof":
            if len(words) > 1 and words[1] not in ("with", "using"):
                return f"{where}: line {s.line}: 'Proof {words[1]}' is not allowed"
            in_proof = True
            continue
        if head in PROOF_END:
            return f"{where}: line {s.line}: {head} without a proof"
        if head not in DEFINITION_HEADS:
            return f"{where}: line {s.line}: command {head!r} is not in the allow-list"
        if head == "Local" and (len(words) < 2 or words[1] not in ("Definition", "Open")):
            return f"{where}: line {s.line}: 'Local {words[1] if len(words) > 1 else ''}'" \
                   " is not allowed"
        if head in ("Require", "From", "Import", "Export"):
            why = _import_reason(words)
            if why:
                return f"{where}: line {s.line}: {why}"
        if head in ("Lemma", "Theorem", "Fact", "Remark", "Corollary", "Proposition",
                    "Example"):
            in_proof = True  # a proof follows (with or without "Proof.")
        if head in ("Open", "Close") and (len(words) < 2 or words[1] != "Scope"):
            return f"{where}: line {s.line}: only 'Open/Close Scope' is allowed"
    if in_proof:
        return f"{where}: a proof is left open"
    return None


_RESERVED = re.compile(r"(?i)vsq")


def _reserved(word: str) -> bool:
    """The file's own names (``VsqU<nonce>_<i>`` per unit, ``VsqL<nonce>``, ``vsq<nonce>_``
    tactics) start with ``vsq``: a candidate naming any part of them, qualified or not,
    is refused even though the nonce makes them unguessable."""
    return any(_RESERVED.match(part) for part in word.split("."))


def _import_reason(words: tuple[str, ...]) -> str | None:
    rest = list(words)
    if rest[0] == "From":
        if len(rest) < 3 or rest[1] != "Coq":
            return "'From' is only allowed for the Coq standard library"
        rest = rest[2:]
    if rest and rest[0] == "Require":
        rest = rest[1:]
    if rest and rest[0] in ("Import", "Export"):
        rest = rest[1:]
    if not rest:
        return "empty import"
    for name in rest:
        if not _library_ok(name):
            return f"library {name!r} is not in the allow-list"
    return None


def screen_term(text: str, *, where: str = "body") -> str | None:
    """A definition body (a term between markers): the same words refused, and
    no sentence end, so that nothing after it can run as a command."""
    if "\x00" in text:
        return f"{where}: NUL byte"
    try:
        items = sentences(text)
    except LexError as exc:
        return f"{where}: {exc}"
    if len(items) > 1 or (items and items[0].raw.rstrip().endswith(".")
                          and not items[0].raw.rstrip().endswith("..")):
        return f"{where}: a body must be one term, with no sentence-ending '.'"
    for s in items:
        if "#[" in s.words:
            return f"{where}: attributes (#[...]) are not allowed"
        for w in s.words:
            if w in DENIED_WORDS:
                return f"{where}: {w!r} is not allowed"
            if _reserved(w):
                return f"{where}: {w!r} names the checker's own modules"
    return None


OPENERS = frozenset({"Definition", "Fixpoint", "Lemma", "Theorem", "Fact", "Remark",
                     "Corollary", "Proposition", "Example", "Let"})


def opaque_names(text: str) -> frozenset[str]:
    """Names ``text`` defines and closes with ``Qed`` (opaque: ``Compute`` cannot
    unfold them). A specification whose answer is stuck on one of its own opaque
    names chose not to reduce: that is its failure, not the checker's."""
    try:
        items = sentences(text)
    except LexError:
        return frozenset()
    names: set[str] = set()
    last = None
    for s in items:
        words = s.words
        if len(words) >= 2 and words[0] in OPENERS:
            last = words[1]
        elif words[:1] == ("Local",) and len(words) >= 3 and words[1] in OPENERS:
            last = words[2]
        elif words[:1] == ("Qed",) and last is not None:
            names.add(last)
            last = None
    return frozenset(names)

