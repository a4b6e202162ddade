"""The Coq language plug-in (see :mod:`veriscale.backends.language`).

Offline red team for Coq, in the paper's five strategies (constant return,
input echo, trivial synthesis, malicious deletion, edge case) plus near-miss
perturbations of the reference's result; flawed specifications by dropping
top-level ``&&`` conjuncts of the ground-truth postcondition; the rules of the
paper's Appendix C for prompts, with Coq's forbidden constructs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from veriscale.backends.coq import format as F
from veriscale.backends.coq.lexer import split_conjuncts
from veriscale.backends.coq.literal import is_ascii, nat_magnitude, parse_coq, to_coq
from veriscale.backends.coq.safety import screen, screen_term
from veriscale.backends.coq.types import coq_type, parse_coq_type
from veriscale.backends.language import PromptParts, Template, Weakening, assemble_templates
from veriscale.benchmark.model import Param, Task
from veriscale.values import ArrayT, LeanType, ListT, OptionT, ProdT, Scalar

NAT_BOUND = 1_000
"""Largest ``nat`` a seed or mutant may hold (unary in Coq: a function of a 10^5 input
can build 10^15 cells). The backend's own ``nat_bound`` (what it agrees to evaluate
at all) is larger, so that a benchmark's own tests are still checked."""


def _is(t: LeanType, name: str) -> bool:
    return isinstance(t, Scalar) and t.name == name


def constants(t: LeanType) -> list[str]:
    """A few constant values of ``t`` (within the nat bound), as Coq text."""
    if _is(t, "Int"):
        return ["0%Z", "1%Z", "(-1)%Z"]
    if _is(t, "Nat"):
        return ["0%nat", "1%nat"]
    if _is(t, "Bool"):
        return ["true", "false"]
    if _is(t, "String"):
        return ['""%string', '"a"%string']
    if _is(t, "Char"):
        return ['"a"%char']
    if isinstance(t, (ListT, ArrayT)):
        return [f"(@nil {_atom(t.elem)})"]
    if isinstance(t, OptionT):
        return [f"(@None {_atom(t.elem)})"]
    if isinstance(t, ProdT):
        a, b = constants(t.fst), constants(t.snd)
        return [f"({x}, {y})" for x, y in zip(a, b, strict=False)] if a and b else []
    return []


def _atom(t: LeanType) -> str:
    text = coq_type(t)
    return text if text.isidentifier() else f"({text})"


def perturbations(t: LeanType, v: str) -> list[tuple[str, str]]:
    """Near misses of the value ``v : t`` (Coq text): off by one, element dropped..."""
    if _is(t, "Int"):
        return [("plus-one", f"({v} + 1)%Z"), ("minus-one", f"({v} - 1)%Z"),
                ("negate", f"(- {v})%Z")]
    if _is(t, "Nat"):
        return [("succ", f"(S {v})"), ("pred", f"(Nat.pred {v})")]
    if _is(t, "Bool"):
        return [("negate", f"(negb {v})")]
    if _is(t, "String"):
        return [("drop-first-char",
                 f"(match {v} with EmptyString => EmptyString | String _ s => s end)"),
                ("append-char", f'({v} ++ "a")%string')]
    if isinstance(t, (ListT, ArrayT)):
        return [("drop-first", f"(tl {v})"), ("reverse", f"(rev {v})"),
                ("duplicate-first", f"(match {v} with nil => nil | cons h r => h :: h :: r end)"),
                ("swap-first-two",
                 f"(match {v} with cons a (cons b r) => b :: a :: r | l => l end)"),
                ("drop-last", f"(removelast {v})")]
    if isinstance(t, OptionT):
        return [("none", f"(@None {_atom(t.elem)})")]
    if isinstance(t, ProdT):
        out = [(f"fst-{k}", f"({e}, snd {v})") for k, e in perturbations(t.fst, f"(fst {v})")]
        out += [(f"snd-{k}", f"(fst {v}, {e})") for k, e in perturbations(t.snd, f"(snd {v})")]
        return out
    return []


def _edge(sig: Any) -> tuple[str, str] | None:
    for p in sig.params:
        if isinstance(p.type, (ListT, ArrayT)):
            return f"{p.name}-empty", f"(match {p.name} with nil => true | _ => false end)"
        if _is(p.type, "Int"):
            return f"{p.name}-zero", f"(Z.eqb {p.name} 0%Z)"
        if _is(p.type, "Nat"):
            return f"{p.name}-zero", f"(Nat.eqb {p.name} 0%nat)"
        if _is(p.type, "String"):
            return f"{p.name}-empty", f'(String.eqb {p.name} ""%string)'
    return None


def _strategies(sig: Any) -> list[tuple[str, str, str]]:
    ret = sig.return_type
    out = [("constant-return", c, c) for c in constants(ret)]
    for p in sig.params:
        if p.type == ret:
            out.append(("input-echo", p.name, p.name))
        if isinstance(p.type, (ListT, ArrayT)):
            if _is(ret, "Nat"):
                out.append(("trivial-synthesis", f"length {p.name}", f"(length {p.name})"))
            if _is(ret, "Int"):
                out.append(("trivial-synthesis", f"length {p.name}",
                            f"(Z.of_nat (length {p.name}))"))
            if isinstance(ret, (ListT, ArrayT)) and p.type.elem == ret.elem:
                out.append(("malicious-deletion", f"tl {p.name}", f"(tl {p.name})"))
                out.append(("trivial-synthesis", f"rev {p.name}", f"(rev {p.name})"))
    return out


def code_header(task: Task, name: str | None = None) -> str:
    sig = task.signature
    binders = " ".join(f"({p.name} : {p.type_text})" for p in sig.params)
    return f"Definition {name or sig.name} {binders} : {sig.return_text} :="


def reference_definition(task: Task, ref_name: str) -> str | None:
    """The GT code as ``Definition <ref_name> ...`` after its ``code_aux``."""
    if task.coq is None or not task.coq.code.strip() or F.takes_proof_argument(task.coq):
        return None
    aux = task.coq.code_aux.strip("\n")
    main = f"{code_header(task, ref_name)}\n{task.coq.code.rstrip()}\n."
    return f"{aux}\n\n{main}" if aux.strip() else main


def adversary_templates(task: Task) -> list[Template]:
    sig = task.signature
    header = code_header(task)

    def define(expr: str, before: str = "") -> str:
        main = f"{header}\n  {expr}.\n"
        return f"{before}\n\n{main}" if before else main

    ref_name = f"{sig.name}_vs_ref"
    ref = reference_definition(task, ref_name)
    call = "(" + " ".join([ref_name, *(p.name for p in sig.params)]) + ")"
    return assemble_templates(
        _strategies(sig), define, wraps_reference=ref is not None,
        constants=constants(sig.return_type), edge=_edge(sig),
        perturbations=perturbations(sig.return_type, "vs_r"),
        guarded=lambda cond, const: define(f"if {cond} then {const} else {call}", ref or ""),
        bound=lambda expr: define(f"let vs_r := {call} in {expr}", ref or ""))


def weakened_postconditions(task: Task) -> list[Weakening]:
    """GT postcondition with each top-level conjunct dropped, and with all dropped."""
    if task.coq is None or not task.coq.postcond.strip():
        return []
    parts = split_conjuncts(task.coq.postcond)
    out: list[Weakening] = []
    if len(parts) > 1:
        for k in range(len(parts)):
            rest = parts[:k] + parts[k + 1:]
            out.append(Weakening(f"drop:{k + 1}", " && ".join(f"({p})" for p in rest)))
    out.append(Weakening("drop-all", "true"))
    return out


PROMPT_RULES = """\
Write Coq (Coq 8.16 standard library only).
- The precondition and the postcondition are bool-valued functions (use Z.eqb, Z.leb,
  Nat.eqb, String.eqb, andb/&&, orb/||, negb, forallb, existsb); they are checked by
  Compute, so they must reduce to true or false on concrete inputs.
- Give only the body of each definition; do not restate its header.
- Define helpers in the aux sections as Definition or Fixpoint (structural recursion).
- Forbidden: Axiom, Parameter, Variable, Hypothesis, Admitted, admit, Abort, Extract/
  Extraction, Set/Unset of any flag, Declare ML Module, Load, Redirect, Drop, Module,
  Section, Notation, Ltac, attributes (#[...]), Print/Compute/Eval/Check, and any library
  outside the Coq standard library.
- A specification must be exact: accept every correct output and reject every wrong one;
  it must not restate the implementation, and must not depend on how it computes.
"""


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

    if task.coq is None or F.takes_proof_argument(task.coq):
        return []
    body, aux = task.coq.code, task.coq.code_aux
    sep = "\n(* vs: body *)\n"
    items = [(op, f"{aux}{sep}{b}") for op, b in _code_sites(body)]
    items += [(op, f"{a}{sep}{body}") for op, a in _code_sites(aux)] if aux.strip() else []
    picked = pick_distinct(items, limit, seed, f"{task.id}:code", f"{aux}{sep}{body}",
                           lambda t: " ".join(strip_comments(t).split()))
    out = []
    for op, both in picked:
        a, b = both.split(sep, 1)
        out.append((op, COQ.code_definition(task, b, a)))
    return out


def spec_mutants(task: Task, kind: str, limit: int = 10) -> list[tuple[str, str]]:
    """Flawed bodies of the GT precondition or postcondition."""
    if task.coq is None:
        return []
    body = task.coq.precond if kind == "precond" else task.coq.postcond
    items: list[tuple[str, str]] = []
    parts = split_conjuncts(body)
    if len(parts) > 1:
        items += [(f"drop conjunct {k + 1}", " && ".join(f"({p})" for p in parts[:k] + parts[k + 1:]))
                  for k in range(len(parts))]
    items += rule_mutants(body, limit)
    return items[:limit]


class CoqPlugin:
    name = "coq"
    display_name = "Coq"
    backend = "coq"
    format_name = "coq"
    task_files = ("task.v", "task.json")
    backend_takes_seed = False  # its backend seeds the candidates' ``random`` from the run's seed
    backend_takes_runner = False  # its backend takes ``--runner`` (which prover binary)
    cheap_evaluation = False  # ``time_evaluation = "auto"`` times it (no prover start-up cost)
    screen_name = "veriscale.backends.coq.safety"

    def owns_task_dir(self, path: Path) -> bool:
        return F.is_coq_task_dir(path)

    def load_task_dir(self, path: Path) -> tuple[Task | None, list[Any]]:
        return F.load_task_dir(path)

    def write_task_dir(self, task: Task, path: Path) -> Path:
        return F.write_task_dir(task, path)

    def lint_task_dir(self, path: Path) -> Any:
        return F.lint_task_dir(path)

    def raw_suite(self, path: Path) -> tuple[Any, Any]:
        return F.raw_suite(path)

    def parse_type(self, text: str) -> LeanType:
        return parse_coq_type(text)

    def type_text(self, t: LeanType) -> str:
        return coq_type(t)

    def render_value(self, t: LeanType, value: Any) -> str:
        return to_coq(t, value)

    def parse_value(self, t: LeanType, text: str) -> Any:
        return parse_coq(t, text)

    def input_ok(self, task: Task, inp: Any) -> bool:
        """Inputs within the nat bound (large magnitudes stay for ``Z``), with ASCII
        strings and chars only (see :func:`is_ascii`)."""
        return all(nat_magnitude(p.type, v) <= NAT_BOUND and is_ascii(p.type, v)
                   for p, v in zip(task.signature.params, inp, strict=False))

    def screen(self, code: str) -> str | None:
        return screen(code)

    def screen_body(self, body: str) -> str | None:
        return screen_term(body)

    def adversary_templates(self, task: Task) -> list[Template]:
        return adversary_templates(task)

    def weakened_postconditions(self, task: Task) -> list[Weakening]:
        return weakened_postconditions(task)

    def split_conjuncts(self, body: str) -> list[str]:
        return split_conjuncts(body)

    def code_mutants(self, task: Task, limit: int = 10, seed: int = 0
                     ) -> list[tuple[str, str]]:
        return code_mutants(task, limit, seed)

    def spec_mutants(self, task: Task, kind: str = "postcond", limit: int = 10,
                     seed: int = 0) -> list[tuple[str, str]]:
        return spec_mutants(task, kind, limit)

    def trivial_precondition(self, task: Task) -> bool:
        return task.coq is not None and task.coq.precond.strip() in ("", "true")

    def ground_truth(self, task: Task) -> tuple[str, tuple[str, str, str, str]]:
        """The GT code (complete definition) and (precond, postcond, their aux)."""
        assert task.coq is not None
        c = task.coq
        return (self.code_definition(task, c.code, c.code_aux),
                (c.precond, c.postcond, c.precond_aux, c.postcond_aux))

    def prompt_rules(self) -> str:
        return PROMPT_RULES

    def code_fence(self) -> str:
        return "coq"

    def code_header(self, task: Task) -> str:
        return code_header(task)

    def prompt_parts(self, task: Task) -> PromptParts:
        """The language parts of the spec and red-team prompts."""
        return PromptParts(
            pre_sig=precond_header(task), post_sig=postcond_header(task),
            impl_sig=code_header(task), spec_rules=PROMPT_RULES, forbidden=PROMPT_RULES,
            pre_marker=SPEC_PRE, post_marker=SPEC_POST, adversary_marker=ADVERSARY + " {i} *)",
            loopholes="- does it check `length result` but not the elements?\n"
                      "- does it check sortedness but not that the elements come from "
                      "the input?\n- is a `forallb` over an empty list vacuously true?",
            strategies="constant return (`0%Z`, `[]`, `\"\"%string`, `false`, `None`); "
                       "input echoing; trivial synthesis (`repeat 0 n`, `seq 0 n`); "
                       "malicious deletion (return `[]`); edge-case exploitation")

    def gt_precondition_text(self, task: Task) -> str:
        from veriscale.backends.base import Spec

        return self.spec_texts(task, Spec())[0]

    def spec_texts(self, task: Task, spec: Any) -> tuple[str, str]:
        """(precondition, postcondition) definitions of ``spec``, the GT where it has none."""
        s = task.coq
        if s is None:
            return "", ""
        pre_body = spec.precond if spec.precond is not None else s.precond
        post_body = spec.postcond if spec.postcond is not None else s.postcond
        pre_aux = spec.precond_aux if spec.precond is not None else s.precond_aux
        post_aux = spec.postcond_aux if spec.postcond is not None else s.postcond_aux
        pre = f"{pre_aux.strip()}\n\n{precond_header(task)}\n  {pre_body.strip()}.".strip()
        post = f"{post_aux.strip()}\n\n{postcond_header(task)}\n  {post_body.strip()}.".strip()
        return pre, post

    def parse_spec_answer(self, text: str, task: Task, origin: str = "", *,
                          truncated: bool = False) -> Any:
        return parse_spec_answer(text, task, origin)

    answer_syntax = None  # red-team answers are read by parse_adversary_answer below

    def parse_adversary_answer(self, text: str, task: Task, origin: str = "",
                               target_spec: str = "", *, truncated: bool = False
                               ) -> tuple[list[Any], list[str]]:
        return parse_adversary_answer(text, task, origin, target_spec)

    def solution_imports(self, imports: str) -> str:
        return ""  # a Coq candidate brings no imports of its own

    def code_definition(self, task: Task, body: str, code_aux: str = "") -> str:
        """A CodeGen body (VERINA stores bodies) as ``code_aux`` + the full definition."""
        main = f"{code_header(task)}\n{body.rstrip()}\n."
        return f"{code_aux.strip()}\n\n{main}\n" if code_aux.strip() else main + "\n"


COQ = CoqPlugin()

__all__ = ["COQ", "NAT_BOUND", "CoqPlugin", "Param", "adversary_templates", "constants",
           "perturbations", "weakened_postconditions"]


# ---------------------------------------------------------------- LLM answers

SPEC_PRE = "(* Precondition Implementation *)"
SPEC_POST = "(* Postcondition Implementation *)"
ADVERSARY = "(* Adversarial Implementation"


def precond_header(task: Task) -> str:
    sig = task.signature
    binders = " ".join(f"({p.name} : {p.type_text})" for p in sig.params)
    return f"Definition {sig.name}_precond {binders} : bool :="


def postcond_header(task: Task) -> str:
    sig = task.signature
    binders = " ".join(f"({p.name} : {p.type_text})" for p in sig.params)
    return f"Definition {sig.name}_postcond {binders} (result : {sig.return_text}) : bool :="


def _coq_code(text: str) -> str:
    import re

    blocks = re.findall(r"```(?:coq|rocq|v)?[^\n]*\n(.*?)```", text, re.S)
    return "\n".join(blocks) if blocks else text


def _definition_body(sentence_text: str) -> str | None:
    """The body after the top-level ``:=`` of a ``Definition``."""
    depth = 0
    for i, c in enumerate(sentence_text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and sentence_text.startswith(":=", i):
            return sentence_text[i + 2:].strip()
    return None


def parse_spec_answer(text: str, task: Task, origin: str = "") -> Any:
    """A candidate spec from a model's Coq answer: the bodies of ``F_precond`` and
    ``F_postcond`` (parameter names as in the task) and the helpers before each."""
    from veriscale.backends.base import Spec
    from veriscale.backends.coq.lexer import sentences
    from veriscale.llm.parsers import ParseError

    name = task.signature.name
    items = sentences(_coq_code(text))
    pre_i = next((i for i, s in enumerate(items) if s.words[:2] == ("Definition",
                                                                   f"{name}_precond")), -1)
    post_i = next((i for i, s in enumerate(items) if s.words[:2] == ("Definition",
                                                                    f"{name}_postcond")), -1)
    if post_i < 0:
        raise ParseError(f"no definition of {name}_postcond")
    if pre_i > post_i:
        raise ParseError(f"{name}_precond is defined after {name}_postcond")
    helpers = [i for i, s in enumerate(items) if i not in (pre_i, post_i)
               and s.words[:1] and s.words[0] in ("Definition", "Fixpoint")]
    pre_body = _definition_body(items[pre_i].text) if pre_i >= 0 else None
    post_body = _definition_body(items[post_i].text)
    if post_body is None:
        raise ParseError(f"{name}_postcond has no body")
    pre_aux = "\n\n".join(items[i].raw for i in helpers if i < pre_i)
    post_aux = "\n\n".join(items[i].raw for i in helpers if max(pre_i, -1) < i < post_i)
    spec = Spec(precond=pre_body, postcond=post_body, precond_aux=pre_aux,
                postcond_aux=post_aux, origin=origin)
    from veriscale.llm.parsers import spec_id

    return Spec(precond=spec.precond, postcond=spec.postcond, precond_aux=spec.precond_aux,
                postcond_aux=spec.postcond_aux, id=spec_id(spec), origin=origin)


def parse_adversary_answer(text: str, task: Task, origin: str = "", target_spec: str = ""
                           ) -> tuple[list[Any], list[str]]:
    """Implementations from a red-team answer: each chunk after a marker must define
    ``F<i>`` (renamed to ``F``); returns (implementations, reasons for rejected chunks)."""
    import re

    from veriscale.backends.base import Implementation
    from veriscale.llm.parsers import adversary_id

    name = task.signature.name
    code = _coq_code(text)
    chunks = [c for c in re.split(r"\(\*\s*Adversarial Implementation\s*\d*\s*\*\)", code)
              if c.strip()]
    out, rejected = [], []
    for k, chunk in enumerate(chunks, start=1):
        m = re.search(rf"\b(?:Definition|Fixpoint)\s+({re.escape(name)}\d*)\b", chunk)
        if m is None:
            rejected.append(f"chunk {k}: no definition of {name}<i>")
            continue
        renamed = re.sub(rf"\b{re.escape(m.group(1))}\b", name, chunk).strip()
        out.append(Implementation(code=renamed, id=adversary_id(renamed),
                                  strategy=f"llm:{k}", origin=origin, target_spec=target_spec))
    return out, rejected
