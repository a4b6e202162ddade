"""Mutants of the Coq ground truth (code and specifications) by textual rules, for a
suite's discriminative power."""

from __future__ import annotations

import re

from veriscale.backends.coq import format as F
from veriscale.backends.coq.lexer import split_conjuncts
from veriscale.backends.coq.sections import coq_sections
from veriscale.backends.coq.templates import code_definition
from veriscale.benchmark.model import Task

_RULES = (
    ("<? -> <=?", r"<\?", "<=?"), ("<=? -> <?", r"<=\?", "<?"), ("=? -> <=?", r"(?<![<>])=\?", "<=?"),
    ("&& -> ||", r"&&", "||"), ("|| -> &&", r"\|\|", "&&"), ("+ 1 -> + 2", r"\+ 1\b", "+ 2"),
    ("- 1 -> - 2", r"- 1\b", "- 2"), ("true -> false", r"\btrue\b", "false"),
    ("false -> true", r"\bfalse\b", "true"), ("drop negb", r"\bnegb\s", ""),
    ("forallb -> existsb", r"\bforallb\b", "existsb"), ("existsb -> forallb", r"\bexistsb\b", "forallb"),
)


def rule_mutants(text: str, limit: int) -> list[tuple[str, str]]:
    """One-site operator swaps (the Coq counterparts of the Lean mutation rules),
    skipping comments and strings; distinct, at most ``limit``, deterministic."""
    import re

    from veriscale.backends.coq.lexer import strip_comments

    clean = strip_comments(text)
    strings = [m.span() for m in re.finditer(r'"(?:[^"]|"")*"', clean)]
    seen = {" ".join(text.split())}
    out: list[tuple[str, str]] = []
    for op, pattern, repl in _RULES:
        for m in re.finditer(pattern, clean):
            if any(a <= m.start() < b for a, b in strings):
                continue
            mutant = text[:m.start()] + repl + text[m.end():]
            key = " ".join(mutant.split())
            if key not in seen:
                seen.add(key)
                out.append((op, mutant))
            if len(out) >= limit:
                return out
    return out


# The Lean plug-in's code operator families, in Coq's spelling.
_CODE_RULES = (
    ("lt->le", r"<\?", "<=?"), ("le->lt", r"<=\?", "<?"),
    ("gt->ge", r">\?", ">=?"), ("ge->gt", r">=\?", ">?"),
    ("ltb->leb", r"\b(Z|Nat|N)\.ltb\b", r"\1.leb"), ("leb->ltb", r"\b(Z|Nat|N)\.leb\b", r"\1.ltb"),
    ("eq->le", r"(?<![<>=])=\?", "<=?"),
    ("plus->minus", r"(?<=\s)\+(?=\s)", "-"), ("minus->plus", r"(?<=\s)-(?=\s)", "+"),
    ("0->1", r"(?<![\w.'])0(?![\w.'])", "1"), ("1->0", r"(?<![\w.'])1(?![\w.'])", "0"),
    ("and->or", r"&&", "||"), ("or->and", r"\|\|", "&&"),
    ("andb->orb", r"\bandb\b", "orb"), ("orb->andb", r"\borb\b", "andb"),
    ("true->false", r"\btrue\b", "false"), ("false->true", r"\bfalse\b", "true"),
    ("drop negb", r"\bnegb\s", ""),
    ("forallb->existsb", r"\bforallb\b", "existsb"), ("existsb->forallb", r"\bexistsb\b", "forallb"),
)
_IF = re.compile(r"\bif\s+([^\n]+?)\s+then\b")


def _code_sites(text: str) -> list[tuple[str, str]]:
    """Every one-site mutant of ``text`` (operator, text) by :data:`_CODE_RULES`, and
    each ``if`` condition forced to ``true``/``false`` (a branch dropped); comments
    and strings are never touched."""
    from veriscale.backends.coq.lexer import strip_comments

    clean = strip_comments(text)
    strings = [m.span() for m in re.finditer(r'"(?:[^"]|"")*"', clean)]

    def free(at: int) -> bool:
        return not any(a <= at < b for a, b in strings)

    out: list[tuple[str, str]] = []
    for op, pattern, repl in _CODE_RULES:
        for m in re.finditer(pattern, clean):
            if free(m.start()):
                out.append((op, text[:m.start()] + m.expand(repl) + text[m.end():]))
    for m in _IF.finditer(clean):
        if free(m.start()):
            a, b = m.span(1)
            out.append(("if->true (drop else)", text[:a] + "true" + text[b:]))
            out.append(("if->false (drop then)", text[:a] + "false" + text[b:]))
    return out


def code_mutants(task: Task, limit: int = 10, seed: int = 0) -> list[tuple[str, str]]:
    """Flawed versions of the GT code, as complete definitions: one-site edits of the
    code body and of its helpers (``code_aux``: most VERINA-Coq code lives there),
    the Lean plug-in's operator families; above ``limit``, a seeded draw."""
    from veriscale.backends.coq.lexer import strip_comments
    from veriscale.backends.sampling import pick_distinct

    coq = coq_sections(task)
    if coq is None or F.takes_proof_argument(coq):
        return []
    body, aux = coq.code, coq.code_aux
    sep = "\n(* vs: body *)\n"
    items = [(op, f"{aux}{sep}{b}") for op, b in _code_sites(body)]
    items += [(op, f"{a}{sep}{body}") for op, a in _code_sites(aux)] if aux.strip() else []
    picked = pick_distinct(items, limit, seed, f"{task.id}:code", f"{aux}{sep}{body}",
                           lambda t: " ".join(strip_comments(t).split()))
    out = []
    for op, both in picked:
        a, b = both.split(sep, 1)
        out.append((op, code_definition(task, b, a)))
    return out


def spec_mutants(task: Task, kind: str, limit: int = 10) -> list[tuple[str, str]]:
    """Flawed bodies of the GT precondition or postcondition."""
    coq = coq_sections(task)
    if coq is None:
        return []
    body = coq.precond if kind == "precond" else coq.postcond
    items: list[tuple[str, str]] = []
    parts = split_conjuncts(body)
    if len(parts) > 1:
        items += [(f"drop conjunct {k + 1}", " && ".join(f"({p})" for p in parts[:k] + parts[k + 1:]))
                  for k in range(len(parts))]
    items += rule_mutants(body, limit)
    return items[:limit]
