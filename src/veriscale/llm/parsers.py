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


# ---------------------------------------------------------------------- fences

_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*$", re.MULTILINE)


def code_blocks(text: str, languages: tuple[str, ...] = ()) -> list[str]:
    """Contents of fenced blocks, in order; an unterminated last fence runs to the end.

    With ``languages``, blocks tagged with another language are skipped (untagged
    blocks are kept). No fences at all: the whole text is the one block.
    """
    marks = list(_FENCE.finditer(text))
    if not marks:
        return [text]
    blocks: list[str] = []
    i = 0
    while i < len(marks):
        start = marks[i]
        end = marks[i + 1] if i + 1 < len(marks) else None
        tag = start.group(1).lower()
        body = text[start.end() + 1 : end.start() if end else len(text)]
        if not languages or not tag or tag in languages:
            blocks.append(body)
        i += 2
    return blocks


def drop_markdown_lines(code: str) -> str:
    """Remove markdown headings (``# ...``, ``## ...``) that models put inside code."""
    return "\n".join(line for line in code.splitlines() if not re.match(r"^#{1,6}\s", line))


# ---------------------------------------------------------------------- seeds


@dataclass
class ParsedInputs:
    inputs: list[Input] = field(default_factory=list)
    ill_typed: int = 0
    duplicates: int = 0
    reasons: list[str] = field(default_factory=list)  # one per dropped item (first 20)


def _json_values(text: str) -> list[Any]:
    """Every JSON array of objects in ``text``; failing that, every top-level object.

    A truncated answer (``[{...}, {...}, {"inp``) still yields its complete objects.
    """
    decoder = json.JSONDecoder()
    for block in code_blocks(text):
        stripped = block.strip()
        for start in [m.start() for m in re.finditer(r"\[", stripped)]:
            try:
                value, _ = decoder.raw_decode(stripped, start)
            except ValueError:
                continue
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                return value
    objects: list[Any] = []
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        if isinstance(value, dict):
            objects.append(value)
        pos = end
    return objects


def parse_inputs(text: str, sig: Signature) -> ParsedInputs:
    """Candidate inputs from a seed answer; ill-typed items are dropped and counted."""
    items = _json_values(text)
    out = ParsedInputs()
    seen: set[Input] = set()
    names = set(sig.names)
    for item in items:
        wrapped = isinstance(item.get("input"), dict)
        raw = item["input"] if wrapped else item
        if not wrapped and not (set(raw) & names or not names):
            continue  # a bare object that is no input at all
        try:
            inp = sig.decode_input(raw)
        except Exception as exc:  # any decoding problem makes the item ill-typed
            out.ill_typed += 1
            if len(out.reasons) < 20:
                out.reasons.append(f"{type(exc).__name__}: {exc}"[:300])
            continue
        if inp in seen:
            out.duplicates += 1
            continue
        seen.add(inp)
        out.inputs.append(inp)
    if not out.inputs and not out.ill_typed:
        raise ParseError("no JSON array of inputs found")
    return out


# ---------------------------------------------------------------------- decomposition


@dataclass(frozen=True)
class Decomposition:
    """The Input / Output model of a task (paper Appendix C, problem decomposition)."""

    input_model: str
    output_model: str
    origin: str = ""


def parse_decomposition(text: str) -> Decomposition:
    body = "\n".join(code_blocks(text)) if "```" in text else text
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


def _spec_code(text: str, languages: tuple[str, ...]) -> str:
    code = "\n".join(code_blocks(text, languages))
    # In Lean `#` starts a command, never a comment: a `# Heading` line is markdown.
    return code if "python" in languages else drop_markdown_lines(code)


def parse_lean_spec(text: str, sig: Signature, origin: str = "") -> Spec:
    """A candidate Lean spec: bodies of ``F_precond`` / ``F_postcond`` plus their helpers.

    Parameter names the model chose differently are bound with ``let`` so that the
    body works under the ground-truth header the Lean backend renders.
    """
    code = strip_lean_comments(_spec_code(text, ("lean", "lean4")))
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


def parse_python_spec(text: str, sig: Signature, origin: str = "") -> Spec:
    """A candidate Python spec: complete ``precondition`` / ``postcondition`` sources,
    each preceded by every helper of the answer."""
    code = textwrap.dedent(_spec_code(text, ("python", "py", "python3")))
    module = _py_module(code)
    pre = post = None
    helpers: list[str] = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "precondition":
            pre = _py_function_source(code, node, list(sig.names), "precondition")
        elif isinstance(node, ast.FunctionDef) and node.name == "postcondition":
            post = _py_function_source(code, node, [*sig.names, "result"], "postcondition")
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a stray docstring
        else:
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


def lean_adversaries_from(chunk: str, sig: Signature) -> tuple[list[str], list[str]]:
    """Adversary sources in one chunk: each main definition with the helpers before it.

    The index suffix is removed from the *main* function's name (the one named after
    the task function), wherever it sits in the chunk; helpers keep their names.
    """
    fn = sig.name
    main_re = _main_name_re(fn)
    out: list[str] = []
    problems: list[str] = []
    pending: list[LeanDecl] = []
    for decl in lean_decls(strip_lean_comments(chunk)):
        m = main_re.match(decl.name) if decl.kind in ("def", "abbrev") else None
        if not m:
            if decl.kind:
                pending.append(decl)
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
    if not out and not problems:
        problems.append(f"no definition named {fn} (or {fn}<i>)")
    return out, problems


def python_adversaries_from(chunk: str, sig: Signature) -> tuple[list[str], list[str]]:
    """Like :func:`lean_adversaries_from`, for Python: ``def F<i>(...)`` → ``def F(...)``."""
    fn = sig.name
    main_re = _main_name_re(fn)
    try:
        module = ast.parse(textwrap.dedent(chunk))
    except (SyntaxError, ValueError) as exc:
        return [], [f"not valid Python: {exc}"]
    source = textwrap.dedent(chunk)
    out: list[str] = []
    problems: list[str] = []
    pending: list[str] = []
    for node in module.body:
        seg = ast.get_source_segment(source, node, padded=False) or ast.unparse(node)
        m = main_re.match(node.name) if isinstance(node, ast.FunctionDef) else None
        if not m:
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
                pending.append(seg)
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
    if not out and not problems:
        problems.append(f"no function named {fn} (or {fn}<i>)")
    return out, problems


def parse_adversaries(
    text: str, sig: Signature, lang: str, *, origin: str = "", target_spec: str = ""
) -> ParsedAdversaries:
    """Numbered adversarial implementations from a red-team answer, renamed to the task
    function, deduplicated by code; raises :class:`ParseError` when none is usable."""
    if lang == "python":
        code = _spec_code(text, ("python", "py", "python3"))
        chunks = _marker_chunks(code, "#")
        extract = python_adversaries_from
    else:
        code = _spec_code(text, ("lean", "lean4"))
        chunks = _marker_chunks(code, "--")
        extract = lean_adversaries_from
    result = ParsedAdversaries()
    seen: set[str] = set()
    for index, chunk in enumerate(chunks, start=1):
        sources, problems = extract(chunk, sig)
        result.rejected.extend(f"chunk {index}: {p}" for p in problems)
        for src in sources:
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
