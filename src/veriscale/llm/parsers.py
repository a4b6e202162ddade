"""Parse model answers into typed objects, tolerating fences, prose, garbage and truncation.

Every parser either returns usable items plus the reasons some items were
dropped, or raises :class:`ParseError` when the answer holds nothing usable, so
the caller can re-ask. No parser raises anything else, whatever the text.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from veriscale.backends.base import Implementation, Spec
from veriscale.benchmark.model import Input, Signature
from veriscale.llm import signatures as S
from veriscale.llm.prompts import ADVERSARY_MARKER


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


def _balanced_end(text: str, start: int) -> int:
    """Index after the bracket group opening at ``start`` (quotes of both kinds
    respected), or -1 when it never closes."""
    depth = 0
    quote = ""
    i = start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def _object_at(text: str, pos: int) -> tuple[Any, int] | None:
    """The object starting at ``pos``: JSON, else an unambiguous Python literal."""
    try:
        return json.JSONDecoder().raw_decode(text, pos)
    except ValueError:
        pass
    end = _balanced_end(text, pos)
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


_HEADING_IN = re.compile(r"(?im)^[ \t>#*_-]*(?:\d+[.)]\s*)?input\b[^:\n]{0,40}?[*_ \t]*:")
_HEADING_OUT = re.compile(r"(?im)^[ \t>#*_-]*(?:\d+[.)]\s*)?output\b[^:\n]{0,40}?[*_ \t]*:")


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


# ---------------------------------------------------------------------- Lean scanning

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


def strip_lean_comments(code: str) -> str:
    """Remove ``--`` and (nested) ``/- -/`` comments, leaving strings and chars intact."""
    out: list[str] = []
    i, n, depth = 0, len(code), 0
    while i < n:
        c = code[i]
        if depth:
            if code.startswith("/-", i):
                depth += 1
                i += 2
            elif code.startswith("-/", i):
                depth -= 1
                i += 2
            else:
                if c == "\n":
                    out.append(c)
                i += 1
            continue
        if code.startswith("/-", i):
            depth, i = 1, i + 2
        elif code.startswith("--", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
        elif c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            out.append(code[i : j + 1])
            i = j + 1
        elif c == "'" and i + 2 < n and (code[i + 2] == "'" or code[i + 1] == "\\"):
            j = code.find("'", i + 2 if code[i + 1] == "\\" else i + 1)
            j = i + 2 if j < 0 else j
            out.append(code[i : j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


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


def _binder_mapping(
    got: list[str], want: list[str], what: str
) -> list[tuple[str, str]]:
    """``let`` renames that make a body written with ``got`` names work with ``want``."""
    if len(got) != len(want):
        raise ParseError(f"{what} has {len(got)} parameters, expected {len(want)} ({want})")
    mapping = [(g, w) for g, w in zip(got, want, strict=True) if g != w]
    if any(g in want for g, _ in mapping):
        raise ParseError(f"{what} uses parameter names {got} in another order than {want}")
    return mapping


def _is_precond_binder(typ: str, sig: Signature) -> bool:
    return re.search(rf"(?<![\w.']){re.escape(S.precond_name(sig))}(?![\w'])", typ) is not None


# ---------------------------------------------------------------------- specs


_IDENT = re.compile(r"[^\W\d][\w']*")


def _defined_names(code: str, lang: str) -> set[str]:
    if lang == "python":
        return set(re.findall(r"(?m)^(?:async\s+)?(?:def|class)\s+(\w+)", code)) | set(
            re.findall(r"(?m)^(\w+)\s*(?::[^=\n]*)?=(?!=)", code))
    return {d.name for d in lean_decls(strip_lean_comments(drop_markdown_lines(code))) if d.name}


def _artefact_blocks(text: str, languages: tuple[str, ...], wanted: tuple[str, ...],
                     lang: str) -> list[tuple[str, bool]]:
    """The fenced blocks that make up the requested artefact.

    Reasoning is ignored. When several blocks define the artefact (drafts, then the
    final answer) the last one wins; other blocks are kept only when they define
    something the artefact uses (helpers in their own fence), so a usage example or
    a test in an extra fence is never merged into the artefact.
    """
    blocks = fenced_blocks(answer_text(text), languages)
    if len(blocks) <= 1:
        return blocks
    defs = [_defined_names(b, lang) for b, _ in blocks]
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
    used = set(_IDENT.findall("\n".join(blocks[i][0] for i in chosen)))
    for i, d in enumerate(defs):
        if i not in chosen and i not in main and d and d & used:
            chosen.add(i)
    return [blocks[i] for i in sorted(chosen)]


def _spec_code(text: str, languages: tuple[str, ...], wanted: tuple[str, ...] = (),
               truncated: bool = False) -> str:
    lang = "python" if "python" in languages else "lean"
    blocks = _artefact_blocks(text, languages, wanted, lang) if wanted else fenced_blocks(
        answer_text(text), languages)
    if truncated and blocks and not blocks[-1][1] and len(fenced_blocks(text)) >= 1 \
            and "```" in text and set(wanted) & _defined_names(blocks[-1][0], lang):
        raise ParseError("the answer was cut (finish_reason=length) inside the specification")
    code = "\n".join(b for b, _ in blocks)
    # In Lean `#` starts a command, never a comment: a `# Heading` line is markdown.
    return code if lang == "python" else drop_markdown_lines(code)


def parse_lean_spec(text: str, sig: Signature, origin: str = "", *,
                    truncated: bool = False) -> Spec:
    """A candidate Lean spec: bodies of ``F_precond`` / ``F_postcond`` plus their helpers.

    Parameter names the model chose differently are bound with ``let`` so that the
    body works under the ground-truth header the Lean backend renders.
    """
    wanted = (S.precond_name(sig), S.postcond_name(sig))
    code = strip_lean_comments(_spec_code(text, ("lean", "lean4"), wanted, truncated))
    decls = lean_decls(code)
    pre_name, post_name = S.precond_name(sig), S.postcond_name(sig)
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
        return _rename_prelude(_binder_mapping(names, want, what)) + body

    precond = None
    pre_aux = ""
    if pre_i >= 0:
        precond = body_of(decls[pre_i], list(sig.names), pre_name)
        pre_aux = "\n\n".join(d.text for d in helpers if decls.index(d) < pre_i)
    post_aux = "\n\n".join(d.text for d in helpers if max(pre_i, -1) < decls.index(d) < post_i)
    postcond = body_of(decls[post_i], [*sig.names, "result"], post_name)
    spec = Spec(precond=precond, postcond=postcond, precond_aux=pre_aux, postcond_aux=post_aux,
                origin=origin)
    return _with_id(spec)


def _with_id(spec: Spec) -> Spec:
    return Spec(
        precond=spec.precond, postcond=spec.postcond, precond_aux=spec.precond_aux,
        postcond_aux=spec.postcond_aux, imports=spec.imports, id=spec_id(spec),
        origin=spec.origin,
    )


class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        if node.arg in self.mapping:
            node.arg = self.mapping[node.arg]
        return node


def _py_module(code: str) -> ast.Module:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        raise ParseError(f"not valid Python: {exc}") from None


def _py_function_source(code: str, fn: ast.FunctionDef, want: list[str], what: str) -> str:
    """The source of ``fn``, with its parameters renamed to ``want`` when they differ."""
    if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.posonlyargs:
        raise ParseError(f"{what} must take plain positional parameters {want}")
    got = [a.arg for a in fn.args.args]
    mapping = _binder_mapping(got, want, what)
    if not mapping:
        return ast.get_source_segment(code, fn, padded=False) or ast.unparse(fn)
    used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    if any(w in used for _, w in mapping):
        raise ParseError(f"{what}: cannot rename parameters {got} to {want}")
    renamed = _Renamer(dict(mapping)).visit(ast.parse(ast.unparse(fn)))
    return ast.unparse(renamed)


_PY_KEEP = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
            ast.Assign, ast.AnnAssign)


def parse_python_spec(text: str, sig: Signature, origin: str = "", *,
                      truncated: bool = False) -> Spec:
    """A candidate Python spec: complete ``precondition`` / ``postcondition`` sources,
    each preceded by every helper of the answer (definitions, imports, constants;
    top-level statements such as usage examples are not part of a spec)."""
    code = textwrap.dedent(_spec_code(text, ("python", "py", "python3"),
                                      ("precondition", "postcondition"), truncated))
    module = _py_module(code)
    pre = post = None
    helpers: list[str] = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "precondition":
            pre = _py_function_source(code, node, list(sig.names), "precondition")
        elif isinstance(node, ast.FunctionDef) and node.name == "postcondition":
            post = _py_function_source(code, node, [*sig.names, "result"], "postcondition")
        elif isinstance(node, _PY_KEEP):
            helpers.append(ast.get_source_segment(code, node, padded=False) or ast.unparse(node))
    if post is None:
        raise ParseError("no 'def postcondition' in the answer")
    aux = "\n\n".join(helpers)
    join = lambda src: f"{aux}\n\n{src}" if aux else src  # noqa: E731
    spec = Spec(
        precond=None if pre is None else join(pre), postcond=join(post), origin=origin
    )
    return _with_id(spec)


# ---------------------------------------------------------------------- adversaries


@dataclass
class ParsedAdversaries:
    implementations: list[Implementation] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # reason per dropped candidate


def _marker_chunks(code: str, comment: str) -> list[str]:
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


def _main_name_re(fn: str) -> re.Pattern[str]:
    """``F``, ``F3``, ``F_3``: the task function with the red team's index suffix."""
    return re.compile(rf"^{re.escape(fn)}_?(\d*)$")


def _rename_ident(code: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w.']){re.escape(old)}(?![\w'])", new, code)


Helper = tuple[str, str]  # (name, source) of a non-main definition


def lean_adversaries_from(
    chunk: str, sig: Signature
) -> tuple[list[str], list[str], list[Helper]]:
    """Adversary sources in one chunk: each main definition with the helpers before it,
    plus every helper of the chunk (for adversaries of other chunks that use them).

    The index suffix is removed from the *main* function's name (the one named after
    the task function), wherever it sits in the chunk; helpers keep their names.
    """
    fn = sig.name
    main_re = _main_name_re(fn)
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
            code = _rename_ident(code, decl.name, fn)
        header_end = _top_level_assign(decl.text)
        header = decl.text[:header_end] if header_end >= 0 else decl.text.split("\n|")[0]
        binders = lean_binders(header)
        if not any(_is_precond_binder(t, sig) for _, t in binders):
            problems.append(
                f"{decl.name}: no (h_precond : {S.lean_precond_call(sig)}) argument"
            )
            continue
        plain = [n for n, t in binders if not _is_precond_binder(t, sig)]
        if len(plain) != len(sig.params):
            problems.append(f"{decl.name}: {len(plain)} parameters, expected {len(sig.params)}")
            continue
        out.append(code.strip() + "\n")
    if not out and not problems and not helpers:
        problems.append(f"no definition named {fn} (or {fn}<i>)")
    return out, problems, helpers


def _py_parse_prefix(source: str) -> tuple[ast.Module | None, str, str]:
    """(module, parsed source, problem): the longest prefix that parses, cut at a
    column-0 statement, so an answer cut inside its last definition keeps the rest."""
    try:
        return ast.parse(source), source, ""
    except (SyntaxError, ValueError) as exc:
        first = f"not valid Python: {exc}"
    lines = source.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if re.match(r"(def|class|async|@|import|from)\b",
                                                          ln)]
    for cut in reversed(starts):
        prefix = "".join(lines[:cut])
        if not prefix.strip():
            break
        try:
            return ast.parse(prefix), prefix, f"{first}; the tail from line {cut + 1} was dropped"
        except (SyntaxError, ValueError):
            continue
    return None, source, first


def _py_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def python_adversaries_from(
    chunk: str, sig: Signature
) -> tuple[list[str], list[str], list[Helper]]:
    """Like :func:`lean_adversaries_from`, for Python: ``def F<i>(...)`` → ``def F(...)``."""
    fn = sig.name
    main_re = _main_name_re(fn)
    module, source, problem = _py_parse_prefix(textwrap.dedent(chunk))
    if module is None:
        return [], [problem], []
    out: list[str] = []
    problems: list[str] = [problem] if problem else []
    pending: list[str] = []
    helpers: list[Helper] = []
    for node in module.body:
        seg = ast.get_source_segment(source, node, padded=False) or ast.unparse(node)
        m = main_re.match(node.name) if isinstance(node, ast.FunctionDef) else None
        if not m:
            if isinstance(node, _PY_KEEP):
                pending.append(seg)
                helpers.extend((name, seg) for name in _py_names(node))
            continue
        assert isinstance(node, ast.FunctionDef)
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            problems.append(f"{node.name}: must take plain parameters {list(sig.names)}")
            continue
        got = [a.arg for a in args.args]
        if got != list(sig.names):
            problems.append(f"{node.name}: parameters {got}, expected {list(sig.names)}")
            continue
        code = "\n\n".join([*pending, seg])
        pending = []
        if node.name != fn:
            code = _rename_ident(code, node.name, fn)
        out.append(code.strip() + "\n")
    if not out and not problems and not helpers:
        problems.append(f"no function named {fn} (or {fn}<i>)")
    return out, problems, helpers


def with_shared_helpers(code: str, pool: list[Helper], fn: str) -> str:
    """``code`` preceded by the helpers of ``pool`` it uses and does not define,
    transitively, in the order the answer defined them (first definition wins)."""
    first: dict[str, str] = {}
    for name, src in pool:
        if name != fn:
            first.setdefault(name, src)
    own = set(re.findall(r"(?m)^(?:def|abbrev|theorem|lemma|class|structure|inductive)\s+"
                         r"([^\s(:{\[]+)", code)) | set(re.findall(r"(?m)^(\w+)\s*=", code))
    needed: list[str] = []
    frontier = code
    while True:
        used = set(_IDENT.findall(frontier))
        new = [n for n in first if n in used and n not in own and n not in needed]
        if not new:
            break
        needed.extend(new)
        frontier = "\n".join(first[n] for n in new)
    if not needed:
        return code
    order = list(first)
    sources: list[str] = []
    for name in sorted(needed, key=order.index):
        if first[name] not in sources:
            sources.append(first[name])
    return "\n\n".join([*sources, code.strip()]) + "\n"


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
    if lang == "python":
        languages, comment, extract = ("python", "py", "python3"), "#", python_adversaries_from
    else:
        languages, comment, extract = ("lean", "lean4"), "--", lean_adversaries_from
    blocks = fenced_blocks(answer_text(text), languages)
    chunks: list[tuple[str, bool]] = []  # (code, complete)
    for b, (body, closed) in enumerate(blocks):
        code = body if lang == "python" else drop_markdown_lines(body)
        pieces = _marker_chunks(code, comment)
        for k, piece in enumerate(pieces):
            last = b == len(blocks) - 1 and k == len(pieces) - 1
            chunks.append((piece, not (truncated and last and not closed)))
    result = ParsedAdversaries()
    found: list[tuple[int, str]] = []
    pool: list[Helper] = []
    for index, (chunk, complete) in enumerate(chunks, start=1):
        sources, problems, helpers = extract(chunk, sig)
        pool.extend(helpers)
        if not complete and (sources or problems):
            result.rejected.extend(
                f"chunk {index}: cut by the token limit (finish_reason=length)"
                for _ in sources or [None])
            continue
        result.rejected.extend(f"chunk {index}: {p}" for p in problems)
        found.extend((index, src) for src in sources)
    seen: set[str] = set()
    for _, src in found:
        src = with_shared_helpers(src, pool, sig.name)
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
