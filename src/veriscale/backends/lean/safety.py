"""Reject untrusted Lean (LLM specs, adversaries) before it reaches Lean.

A candidate can only be judged by the same checks as the ground truth if it
cannot change what those checks mean: no new axioms or ``sorry`` (proofs of
anything), no ``implemented_by``/``extern``/``csimp`` (compiled code that lies
about the kernel definition), no instances (a bogus ``Decidable``), no
commands or macros (code run at elaboration time, ``#exit`` hiding the rest of
the file), no ``set_option`` (heartbeats, kernel checks), and no way out of the
unit's namespace (``end``/``namespace``). The scan runs on the source with
comments, strings and char literals removed, so a comment mentioning
``sorry`` is fine and a string cannot hide a keyword.
"""

from __future__ import annotations

import re

FORBIDDEN_WORDS = {
    "axiom": "declares an axiom",
    "axioms": "declares axioms",
    "sorry": "uses sorry",
    "admit": "uses admit",
    "opaque": "declares an opaque constant",
    "unsafe": "uses unsafe code",
    "partial": "declares a partial function",
    "implemented_by": "overrides compiled code (implemented_by)",
    "extern": "overrides compiled code (extern)",
    "csimp": "overrides compiled code (csimp)",
    "instance": "declares an instance",
    "attribute": "changes attributes",
    "IO": "uses IO",
    "EIO": "uses IO",
    "BaseIO": "uses IO",
    "noncomputable": "is noncomputable",
    "native_decide": "trusts the compiler (native_decide)",
    "ofReduceBool": "trusts the compiler (ofReduceBool)",
    "trustCompiler": "trusts the compiler",
    "macro": "defines a macro",
    "macro_rules": "defines macro rules",
    "syntax": "defines syntax",
    "elab": "defines an elaborator",
    "elab_rules": "defines elaboration rules",
    "notation": "defines notation",
    "infix": "defines notation",
    "infixl": "defines notation",
    "infixr": "defines notation",
    "prefix": "defines notation",
    "postfix": "defines notation",
    "run_cmd": "runs a command (run_cmd)",
    "run_elab": "runs an elaborator (run_elab)",
    "run_meta": "runs metaprogram code (run_meta)",
    "set_option": "changes options (set_option)",
    "import": "imports modules",
    "namespace": "opens a namespace",
    "section": "opens a section",
    "export": "exports names",
    "initialize": "runs initialisation code",
    "builtin_initialize": "runs initialisation code",
    "dbg_trace": "traces",
    "Classical": "uses classical choice (undecidable, noncomputable)",
}
_IDENT = re.compile(r"[A-Za-z_\u03b1-\u03c9\u0391-\u03a9][\w'!?\u2080-\u209c]*(?:\.[A-Za-z_][\w'!?]*)*")


def strip_comments_and_literals(source: str) -> str:
    """``source`` with comments, string and char literals blanked (lines kept).

    Raises ``ValueError`` on an unterminated comment or string: such text
    would swallow the rest of the generated file.
    """
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("--", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
            continue
        if source.startswith("/-", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if source.startswith("/-", j):
                    depth, j = depth + 1, j + 2
                elif source.startswith("-/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                raise ValueError("unterminated block comment")
            out.append(" " + "\n" * source.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and source[j] != '"':
                j += 2 if source[j] == "\\" else 1
            if j >= n:
                raise ValueError("unterminated string literal")
            out.append('""')
            i = j + 1
            continue
        if c == "'" and (i == 0 or not (source[i - 1].isalnum() or source[i - 1] in "_'!?")):
            m = re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^'\\\n])'", source[i:])
            if m:
                out.append("' '")
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def check_untrusted_lean(source: str) -> str | None:
    """``None`` when ``source`` may be compiled next to the ground truth, else why not."""
    try:
        code = strip_comments_and_literals(source)
    except ValueError as exc:
        return f"rejected: {exc}"
    if "«" in code or "»" in code:
        return "rejected: uses «quoted» identifiers"
    for m in re.finditer(r"#(?!\[)\s*([A-Za-z_]\w*)?", code):
        return f"rejected: contains a command #{m.group(1) or ''}"
    if re.search(r"(?m)^\s*@\[[^\]]*\binstance\b", code):
        return "rejected: declares an instance"
    if re.search(r"\bopen\b[^\n]*\bin\b", code):
        return "rejected: uses `open ... in`"
    ends = len(re.findall(r"(?<![\w.])end(?![\w'])", code))
    mutuals = len(re.findall(r"(?<![\w.])mutual(?![\w'])", code))
    if ends != mutuals:
        return "rejected: `end` outside a `mutual` block (could leave the unit's namespace)"
    for m in _IDENT.finditer(code):
        for part in m.group(0).split("."):
            why = FORBIDDEN_WORDS.get(part)
            if why is None and part.lower().startswith("unsafe"):
                why = "uses unsafe code"
            if why is not None:
                line = code.count("\n", 0, m.start()) + 1
                return f"rejected: line {line}: `{m.group(0)}` {why}"
    return None
