"""Lean answers of a model: top-level declarations, definition headers and bodies,
the spec and red-team answers made into a ``Spec`` and implementations.

The language-neutral part (fences, reasoning, markers, helpers shared between
chunks, ids) is :mod:`veriscale.backends.answers`; comments are removed by the one
Lean lexer (:mod:`veriscale.backends.lean.lexer`).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from veriscale.backends.answers import (
    AnswerSyntax,
    Helper,
    ParseError,
    Rejection,
    binder_mapping,
    drop_markdown_lines,
    main_name_re,
    rename_ident,
    spec_code,
    with_id,
)
from veriscale.backends.base import Spec
from veriscale.backends.lean.lexer import strip_comments_or_keep as strip_lean_comments
from veriscale.backends.lean.prompting import COMMENT
from veriscale.backends.lean.render import postcond_name, precond_call, precond_name
from veriscale.benchmark.model import Signature

_DECL_KW = (
    "def", "theorem", "lemma", "abbrev", "instance", "structure", "inductive", "class",
    "axiom", "opaque", "example", "namespace", "section", "end", "open", "variable",
    "noncomputable", "private", "protected", "partial", "unsafe", "set_option", "attribute",
    "macro", "syntax", "elab", "macro_rules", "import", "mutual", "universe",
)
_DECL_START = re.compile(r"^(@\[|#[a-z]|(?:" + "|".join(_DECL_KW) + r")\b)")
_DEF_NAME = re.compile(
    r"^(?:@\[[^\]]*\]\s*)*(?:(?:private|protected|noncomputable|partial|unsafe|nonrec)\s+)*"
    r"(def|abbrev|theorem|lemma|instance|opaque|axiom|structure|inductive|class)\s+([^\s(:{\[]+)"
)


@dataclass(frozen=True)
class LeanDecl:
    kind: str  # def, theorem, ... ; "" for a command or an unnamed chunk
    name: str
    text: str


def lean_decls(code: str) -> list[LeanDecl]:
    """Split comment-free Lean code into top-level declarations.

    A declaration starts at a column-0 line opening with a keyword or an attribute;
    column-0 lines that do not (a body written flush left) continue the previous one.
    """
    chunks: list[list[str]] = []
    pending_attr: list[str] = []
    for line in code.splitlines():
        if _DECL_START.match(line):
            if line.startswith("@[") and not _DEF_NAME.match(line):
                pending_attr.append(line)
                continue
            chunks.append([*pending_attr, line])
            pending_attr = []
        elif chunks:
            chunks[-1].append(line)
        elif line.strip():
            chunks.append([line])
    decls = []
    for chunk in chunks:
        text = "\n".join(chunk).strip("\n")
        m = _DEF_NAME.match(" ".join(ln.strip() for ln in chunk))
        decls.append(LeanDecl(m.group(1), m.group(2), text) if m else LeanDecl("", "", text))
    return decls


def _top_level_assign(text: str) -> int:
    """Index of the ``:=`` that ends a definition header (bracket depth 0), or -1."""
    depth = 0
    i = 0
    while i < len(text) - 1:
        c = text[i]
        if c in "([{⟨":
            depth += 1
        elif c in ")]}⟩":
            depth -= 1
        elif c == ":" and text[i + 1] == "=" and depth == 0:
            return i
        elif c == '"':
            j = text.find('"', i + 1)
            i = len(text) if j < 0 else j
        i += 1
    return -1


def lean_def_parts(decl_text: str) -> tuple[str, str]:
    """(header, body) of a ``def``; the body is dedented. Raises when there is no ``:=``."""
    k = _top_level_assign(decl_text)
    if k < 0:
        raise ParseError("definition has no ':=' (equation-style definitions are not supported)")
    header = decl_text[:k].strip()
    body = decl_text[k + 2 :]
    lines = body.split("\n")
    first = lines[0].strip()
    rest = textwrap.dedent("\n".join(lines[1:])).strip("\n")
    body = "\n".join(p for p in (first, rest) if p)
    return header, body.strip()


def lean_binders(header: str) -> list[tuple[str, str]]:
    """Explicit binders ``(a b : T)`` of a header as (name, type text) pairs, in order."""
    out: list[tuple[str, str]] = []
    depth = 0
    start = -1
    for i, c in enumerate(header):
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0 and start >= 0:
                group = header[start + 1 : i]
                colon = _top_colon(group)
                if colon > 0:
                    names = group[:colon].split()
                    typ = group[colon + 1 :].strip()
                    if names and all(re.fullmatch(r"[^\W\d][\w'.]*", x) for x in names):
                        out.extend((x, typ) for x in names)
                start = -1
    return out


def _top_colon(group: str) -> int:
    depth = 0
    for i, c in enumerate(group):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif (
            c == ":" and depth == 0 and group[i + 1 : i + 2] not in ("=", ":")
            and group[i - 1 : i] != ":"
        ):
            return i
    return -1

def _rename_prelude(mapping: list[tuple[str, str]]) -> str:
    return "".join(f"let {old} := {new}\n" for old, new in mapping)


def _is_precond_binder(typ: str, sig: Signature) -> bool:
    return re.search(rf"(?<![\w.']){re.escape(precond_name(sig))}(?![\w'])", typ) is not None


def defined_names(code: str) -> set[str]:
    """Names the declarations of ``code`` define (markdown headings and comments ignored)."""
    return {d.name for d in lean_decls(strip_lean_comments(drop_markdown_lines(code))) if d.name}


def parse_lean_spec(text: str, sig: Signature, origin: str = "", *,
                    truncated: bool = False) -> Spec:
    """A candidate Lean spec: bodies of ``F_precond`` / ``F_postcond`` plus their helpers.

    Parameter names the model chose differently are bound with ``let`` so that the
    body works under the ground-truth header the Lean backend renders.
    """
    wanted = (precond_name(sig), postcond_name(sig))
    code = strip_lean_comments(spec_code(text, ANSWER_SYNTAX, wanted, truncated))
    decls = lean_decls(code)
    pre_name, post_name = wanted
    pre_i = next((i for i, d in enumerate(decls) if d.name == pre_name), -1)
    post_i = next((i for i, d in enumerate(decls) if d.name == post_name), -1)
    if post_i < 0:
        raise ParseError(f"no definition of {post_name}")
    if pre_i > post_i:
        raise ParseError(f"{pre_name} is defined after {post_name}")
    # Unnamed chunks can only precede the first declaration (later column-0 text
    # continues a definition): prose before unfenced code, ignored.
    helpers = [d for d in decls if d.kind and d.name not in (pre_name, post_name)]

    def body_of(decl: LeanDecl, want: list[str], what: str) -> str:
        header, body = lean_def_parts(decl.text)
        names = [n for n, t in lean_binders(header) if not _is_precond_binder(t, sig)]
        return _rename_prelude(binder_mapping(names, want, what)) + body

    precond = None
    pre_aux = ""
    if pre_i >= 0:
        precond = body_of(decls[pre_i], list(sig.names), pre_name)
        pre_aux = "\n\n".join(d.text for d in helpers if decls.index(d) < pre_i)
    post_aux = "\n\n".join(d.text for d in helpers if max(pre_i, -1) < decls.index(d) < post_i)
    postcond = body_of(decls[post_i], [*sig.names, "result"], post_name)
    spec = Spec(precond=precond, postcond=postcond, precond_aux=pre_aux, postcond_aux=post_aux,
                origin=origin)
    return with_id(spec)


def lean_adversaries_from(
    chunk: str, sig: Signature
) -> tuple[list[str], list[str], list[Helper]]:
    """Adversary sources in one chunk: each main definition with the helpers before it,
    plus every helper of the chunk (for adversaries of other chunks that use them).

    The index suffix is removed from the *main* function's name (the one named after
    the task function), wherever it sits in the chunk; helpers keep their names.
    """
    fn = sig.name
    main_re = main_name_re(fn)
    out: list[str] = []
    problems: list[str] = []
    pending: list[LeanDecl] = []
    helpers: list[Helper] = []
    for decl in lean_decls(strip_lean_comments(chunk)):
        m = main_re.match(decl.name) if decl.kind in ("def", "abbrev") else None
        if not m:
            if decl.kind:
                pending.append(decl)
                helpers.append((decl.name, decl.text))
            elif decl.text.strip():
                problems.append(f"unexpected top-level text: {decl.text.strip()[:80]!r}")
            continue
        code = "\n\n".join([*(d.text for d in pending), decl.text])
        pending = []
        if decl.name != fn:
            code = rename_ident(code, decl.name, fn)
        header_end = _top_level_assign(decl.text)
        header = decl.text[:header_end] if header_end >= 0 else decl.text.split("\n|")[0]
        binders = lean_binders(header)
        if not any(_is_precond_binder(t, sig) for _, t in binders):
            problems.append(Rejection(
                f"{decl.name}: no (h_precond : {precond_call(sig)}) argument",
                "wrong_signature"))
            continue
        plain = [n for n, t in binders if not _is_precond_binder(t, sig)]
        if len(plain) != len(sig.params):
            problems.append(Rejection(
                f"{decl.name}: {len(plain)} parameters, expected {len(sig.params)}",
                "wrong_signature"))
            continue
        out.append(code.strip() + "\n")
    if not out and not problems and not helpers:
        problems.append(f"no definition named {fn} (or {fn}<i>)")
    return out, problems, helpers


ANSWER_SYNTAX = AnswerSyntax(
    fences=("lean", "lean4"), comment=COMMENT, markdown_headings=True,
    defined_names=defined_names, adversaries_from=lean_adversaries_from,
)
"""How Lean code sits in an answer. In Lean ``#`` starts a command, never a comment:
a ``# Heading`` line inside code is markdown."""


parse_spec = parse_lean_spec  # the name :class:`~veriscale.backends.language.ModuleLLMParts` calls
