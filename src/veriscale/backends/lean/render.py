"""Render many checks of many tasks into one Lean file, and map messages back.

A file holds *units* (one task's definitions, possibly with a candidate spec
or implementation swapped in), each in its own ``namespace`` so that several
tasks share a file without name clashes. Each check is one Lean command on its
own known line range; a message is attributed to the check whose lines contain
its position, else to its unit's definitions, else to the file header. Nothing
depends on message order or on printed markers, so a crash or a timeout simply
leaves the unreached checks without messages.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

from veriscale.backends.base import Implementation, Spec
from veriscale.backends.lean import session
from veriscale.backends.lean.lexer import LexError, blank
from veriscale.backends.lean.process import LeanMessage
from veriscale.backends.lean.safety import check_untrusted_lean
from veriscale.backends.lean.sections import lean_sections
from veriscale.benchmark.model import Input, Signature, Task
from veriscale.benchmark.verina import notation
from veriscale.values import ArrayT, ListT, Opaque, OptionT, ProdT, Scalar, Some, ValueType

PLAUSIBLE_TACTIC = (
    "plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, "
    "randomSeed := some 42 })"
)
CORE_IMPORT_ROOTS = ("Init", "Std", "Lean", "Lake")


# ---------------------------------------------------------------- imports


def _code_only(text: str) -> str:
    """``text`` with comments and literals blanked (the lexer's reading); text the
    lexer refuses is returned as is (the screen rejects untrusted text like that)."""
    try:
        return blank(text)
    except LexError:
        return text


def import_lines(text: str) -> list[str]:
    """The module names imported by ``text`` (``import A B`` may name several)."""
    names: list[str] = []
    for line in _code_only(text).splitlines():
        code = line.split("--", 1)[0].strip()
        if code.startswith("import "):
            names.extend(code.split()[1:])
    return names


def is_core_import(module: str) -> bool:
    return module.split(".", 1)[0] in CORE_IMPORT_ROOTS


# ---------------------------------------------------------------- definitions


def _body(text: str, default: str) -> str:
    """A section body re-indented by two spaces, as a definition's right-hand side."""
    body = textwrap.dedent(text.expandtabs(2)).strip("\n")
    if not body.strip():
        body = default
    return textwrap.indent(body, "  ")


# ---------------------------------------------------------------- definition headers
#
# The one renderer of Lean definition headers, built from the typed signature (never
# cut out of ``task.lean``) so every definition has the shape VERINA uses:
# ``def F (x : T) (h_precond : F_precond (x)) : R``. Prompts, parsers, offline
# adversaries, solutions and the task format all render headers here.


def words(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def binders(sig: Signature, colon: str = " : ") -> str:
    """``(a : A) (b : B)``; VERINA's theorem writes ``colon=": "``."""
    return " ".join(f"({p.name}{colon}{p.type_text})" for p in sig.params)


def arg_names(sig: Signature, parenthesised: bool = True) -> str:
    """``(a) (b)`` (every argument parenthesised, VERINA style) or ``a b``."""
    return " ".join(f"({p.name})" if parenthesised else p.name for p in sig.params)


def precond_name(sig: Signature) -> str:
    return f"{sig.name}_precond"


def postcond_name(sig: Signature) -> str:
    return f"{sig.name}_postcond"


def precond_call(sig: Signature) -> str:
    """``F_precond (a) (b)``: the type of the ``h_precond`` argument."""
    return words(precond_name(sig), arg_names(sig))


def precond_header(sig: Signature) -> str:
    return words("def", precond_name(sig), binders(sig), ": Prop")


def postcond_header(sig: Signature, result_colon: str = " : ") -> str:
    return words("def", postcond_name(sig), binders(sig),
                  f"(result{result_colon}{sig.return_text})",
                  f"(h_precond : {precond_call(sig)})", ": Prop")


def code_header(sig: Signature, name: str | None = None) -> str:
    return words("def", name or sig.name, binders(sig),
                  f"(h_precond : {precond_call(sig)})", f": {sig.return_text}")


def indent_code_body(body: str) -> str:
    """VERINA's rule for a CodeGen body: indent by two spaces unless it already starts so."""
    text = body.strip("\n")
    if text.startswith("  "):
        return text
    return "\n".join(("  " + ln) if ln.strip() else ln for ln in text.splitlines())


def code_definition(task: Task, body: str, code_aux: str = "") -> str:
    """A CodeGen body (VERINA stores bodies) as ``code_aux`` + the full ``def`` with the
    ground-truth signature."""
    parts = [code_aux.strip("\n")] if code_aux.strip() else []
    parts.append(code_header(task.signature) + " :=\n" + indent_code_body(body))
    return "\n\n".join(parts) + "\n"


def _aux(text: str) -> str:
    return text.strip("\n") if text.strip() else ""


def testable_aux(text: str) -> str:
    """VERINA's ``make_spec_aux_testable``: a candidate's spec helpers become
    ``@[reducible, simp]`` (a ``def`` at the start of a line gets the attribute
    unless it or the line before already has it), so ``decide`` can unfold them."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("def ") and "@[reducible, simp]" not in line and (
                i == 0 or "@[reducible, simp]" not in lines[i - 1]):
            lines[i] = "@[reducible, simp] " + line
    return "\n".join(lines)


def _join(*parts: str) -> str:
    return "\n\n".join(p for p in parts if p)


def precond_def(task: Task, body: str) -> str:
    return f"@[reducible, simp]\n{precond_header(task.signature)} :=\n" + _body(body, "True")


def postcond_def(task: Task, body: str) -> str:
    return f"@[reducible, simp]\n{postcond_header(task.signature)} :=\n" + _body(body, "True")


def code_def(task: Task, body: str) -> str:
    return f"{code_header(task.signature)} :=\n" + _body(body, "sorry")


def impl_takes_precond(task: Task, code: str) -> bool:
    """Does the candidate's ``def F`` take the ``h_precond`` proof argument?

    Adversaries are shown the GT signature (with ``h_precond``) but may drop it;
    the call must match the definition they wrote.
    """
    name = re.escape(task.signature.name)
    m = re.search(rf"(?m)^\s*(?:@\[[^\]]*\]\s*)?(?:private\s+)?def\s+{name}\b(.*?):=",
                  _code_only(code), re.S)
    return bool(m and "_precond" in m.group(1))


@dataclass(frozen=True)
class Variant:
    """Which definitions a unit holds: the task, with a candidate spec or implementation."""

    task: Task
    spec: Spec | None = None
    impl: Implementation | None = None

    @property
    def key(self) -> tuple[str, ...]:
        s, i = self.spec, self.impl
        return (
            self.task.id,
            "" if s is None else repr((s.precond, s.postcond, s.precond_aux, s.postcond_aux,
                                       s.imports)),
            "" if i is None else i.code + ("\n" + i.imports if i.imports else ""),
        )

    @property
    def ground_truth_in_scope(self) -> bool:
        """Whether the ground truth's ``solution_aux`` and imports belong in this unit.

        VERINA checks a candidate specification next to the task's own aux only:
        the ground truth's helpers would clash with the candidate's names or lend
        it definitions. They stay when the ground-truth precondition is used (it may
        need them); a candidate precondition alone is checked without a postcondition.
        """
        s = self.spec
        return s is None or s.precond is None

    def imports(self) -> list[str]:
        lean = lean_sections(self.task)
        assert lean is not None
        parts = [lean.task_imports]
        if self.ground_truth_in_scope:
            parts.append(lean.solution_imports)
        if self.spec is not None:
            parts.append(self.spec.imports)
        if self.impl is not None:  # VERINA merges a solution's imports into CodeGen's
            parts.append(self.impl.imports)
        return import_lines("\n".join(parts))

    def definitions(self) -> str:
        """The unit's Lean declarations (bodies from the task, overridden by the candidate)."""
        lean = lean_sections(self.task)
        assert lean is not None
        spec = self.spec
        if spec is not None and spec.precond is not None:
            pre_aux, pre = testable_aux(spec.precond_aux), spec.precond
        else:
            pre_aux, pre = lean.precond_aux, lean.precond
        if spec is not None and spec.postcond is not None:
            post_aux, post = testable_aux(spec.postcond_aux), spec.postcond
        else:
            post_aux, post = lean.postcond_aux, lean.postcond
        solution_aux = _aux(lean.solution_aux) if self.ground_truth_in_scope else ""
        parts = [_aux(lean.task_aux), solution_aux, _aux(pre_aux),
                 precond_def(self.task, pre)]
        if spec is None:  # candidate specs are checked without any code
            if self.impl is not None:
                parts.append(_aux(self.impl.code))
            else:
                parts += [_aux(lean.code_aux), code_def(self.task, lean.code)]
        if self.impl is None and not (spec is not None and spec.postcond is None
                                      and not self.ground_truth_in_scope):
            parts += [_aux(post_aux), postcond_def(self.task, post)]
        return _join(*parts)

    def code_needs_proof(self) -> bool:
        if self.impl is None:
            return True
        return impl_takes_precond(self.task, self.impl.code)


# ---------------------------------------------------------------- terms


def value_text(t: ValueType, v: object) -> str:
    """``notation.render``, plus a guard on opaque values: their text goes into the file verbatim."""
    text = notation.render(t, v)
    if isinstance(t, Opaque):
        why = check_untrusted_lean(text, "term")
        if why:
            raise ValueError(f"opaque value {text[:60]!r} {why}")
    return text


def args_text(task: Task, inp: Input) -> str:
    """Arguments, each escape-safe and parenthesised where needed."""
    params = task.signature.params
    if len(inp) != len(params):
        raise ValueError(f"input has {len(inp)} values, {task.signature.name} takes {len(params)}")
    return " ".join(value_text(p.type, v) for p, v in zip(params, inp, strict=True))


def precond_term(task: Task, inp: Input) -> str:
    args = args_text(task, inp)
    return f"{task.signature.name}_precond {args}".rstrip()


PRECOND_PROOF = "(by sorry)"
KERNEL_PRECOND_PROOF = "(by first | decide | sorry)"
"""The ``h_precond`` argument. Compiled code erases proofs, so ``sorry`` is harmless
there; kernel reduction can meet the proof (code that matches on it, or a result
built from it) and a ``sorry`` then blocks it, so in kernel mode the proof is
``decide`` where the precondition is decidable and ``sorry`` only where it is not."""


def precond_proof(kernel: bool) -> str:
    return KERNEL_PRECOND_PROOF if kernel else PRECOND_PROOF


def postcond_term(task: Task, inp: Input, output: object, kernel: bool = False) -> str:
    args = args_text(task, inp)
    out = value_text(task.signature.return_type, output)
    head = f"{task.signature.name}_postcond {args}".rstrip()
    return f"{head} {out} {precond_proof(kernel)}"


def call_term(task: Task, inp: Input, with_proof: bool, kernel: bool = False) -> str:
    args = args_text(task, inp)
    proof = " " + precond_proof(kernel) if with_proof else ""
    return f"{task.signature.name} {args}".rstrip() + proof


def _has_text(t: ValueType) -> bool:
    """Does ``t`` hold values whose kernel normal form is not a literal (String/Char/UInt8)?"""
    if isinstance(t, Scalar):
        return t.name in ("String", "Char", "UInt8")
    if isinstance(t, (ListT, ArrayT, OptionT)):
        return _has_text(t.elem)
    if isinstance(t, ProdT):
        return _has_text(t.fst) or _has_text(t.snd)
    return False


def projection(t: ValueType, expr: str) -> tuple[str, ValueType]:
    """A term whose ``#reduce`` normal form is printable, and its type.

    Kernel reduction prints Strings, Chars and UInt8s as their internal
    byte/bitvector structures; code points (``Char.toNat``) and ``UInt8.toNat``
    reduce to plain numerals.
    Arrays go through ``toList`` because ``Array.map`` gets stuck.
    """
    if not _has_text(t):
        return expr, t
    if isinstance(t, Scalar) and t.name == "String":
        return f"(({expr}).toList.map Char.toNat)", ListT(Scalar("Nat"))
    if isinstance(t, Scalar) and t.name in ("Char", "UInt8"):
        return f"(({expr}).toNat)", Scalar("Nat")
    if isinstance(t, (ListT, ArrayT)):
        inner, inner_t = projection(t.elem, "x")
        src = f"({expr})" if isinstance(t, ListT) else f"({expr}).toList"
        return f"({src}.map (fun x => {inner}))", ListT(inner_t)
    if isinstance(t, OptionT):
        inner, inner_t = projection(t.elem, "x")
        return f"(({expr}).map (fun x => {inner}))", OptionT(inner_t)
    if isinstance(t, ProdT):
        a, a_t = projection(t.fst, "p.1")
        b, b_t = projection(t.snd, "p.2")
        return f"((fun p => ({a}, {b})) ({expr}))", ProdT(a_t, b_t)
    return expr, t  # pragma: no cover - _has_text covers the rest


def unproject(t: ValueType, v: object) -> object:
    """Rebuild a canonical value of ``t`` from the parsed value of its projection."""
    if not _has_text(t):
        return v
    if isinstance(t, Scalar) and t.name == "String":
        return "".join(chr(int(c)) for c in v)  # type: ignore[union-attr]
    if isinstance(t, Scalar) and t.name == "Char":
        return chr(int(v))  # type: ignore[arg-type]
    if isinstance(t, Scalar) and t.name == "UInt8":
        return int(v)  # type: ignore[arg-type]
    if isinstance(t, (ListT, ArrayT)):
        return tuple(unproject(t.elem, x) for x in v)  # type: ignore[union-attr]
    if isinstance(t, OptionT):
        return None if v is None else Some(unproject(t.elem, v.value))  # type: ignore[union-attr]
    if isinstance(t, ProdT):
        return (unproject(t.fst, v[0]), unproject(t.snd, v[1]))  # type: ignore[index]
    return v  # pragma: no cover


def has_float(t: ValueType) -> bool:
    if isinstance(t, Scalar):
        return t.name == "Float"
    if isinstance(t, (ListT, ArrayT, OptionT)):
        return has_float(t.elem)
    if isinstance(t, ProdT):
        return has_float(t.fst) or has_float(t.snd)
    return isinstance(t, Opaque)


# ---------------------------------------------------------------- commands


def decide_command(prop: str, kernel: bool) -> str:
    """Prints ``true``/``false`` as information (no error on false, unlike ``#guard``)."""
    return f"#reduce decide ({prop})" if kernel else f"#eval! decide ({prop})"


def decided_prop(command: str) -> str | None:
    """``P`` of a ``decide`` check (:func:`decide_command`, either mode), else None."""
    for kernel in (True, False):
        head, tail = decide_command("", kernel)[:-1], ")"
        if command.startswith(head) and command.endswith(tail):
            return command[len(head):-len(tail)]
    return None


def panicked_prop(command: str) -> str | None:
    """``P`` of a compiled ``decide`` check that panicked, as the kernel is asked it: its
    ``h_precond`` proof by ``decide`` (the kernel does not accept a ``sorry``)."""
    prop = decided_prop(command)
    if prop is not None and prop.endswith(" " + PRECOND_PROOF):
        return prop[: -len(PRECOND_PROOF)] + KERNEL_PRECOND_PROOF
    return prop


def kernel_prop(command: str, bool_call: str | None = None) -> str | None:
    """The proposition whose kernel decision answers a stuck kernel-mode check, or None.

    ``#reduce decide (P)`` is answered by ``P``; an ``==`` code test
    ``#reduce ((call) == (expected))`` by ``((call) == (expected)) = true``; and
    ``#reduce call`` of a function returning ``Bool`` (``bool_call`` is its name)
    by ``(call) = true``. Each prints ``true``/``false`` when it reduces, so the
    kernel's answer stands for the same message.
    """
    prop = decided_prop(command)
    if prop is not None:
        return prop
    head = "#reduce "
    if not command.startswith(head) or "\n" in command:
        return None
    term = command[len(head):]
    if term.startswith("((") and term.endswith("))") and ") == (" in term:
        return f"({term}) = true"
    if bool_call and (term == bool_call or term.startswith(bool_call + " ")):
        return f"({term}) = true"
    return None


def kernel_check_kind(command: str) -> str:
    """Which kind of stuck check :func:`kernel_prop` answered, for the stats."""
    if decided_prop(command) is not None:
        return "decide"
    return "code test" if command.startswith("#reduce ((") else "Bool call"


def kernel_decide_command(prop: str, holds: bool) -> str:
    """A proof of ``P`` (or of ``¬P``) by the kernel's own evaluation of ``decide``.

    ``#reduce`` respects irreducibility, so code behind well-founded recursion
    (``Array.all``, ``Array.any``, ...) prints a stuck ``Decidable.rec`` term;
    the kernel unfolds it. The example elaborates without error exactly when
    the kernel reduced ``decide`` to ``true``, so the answer is as trustworthy
    as any ``decide`` proof.
    """
    goal = f"({prop})" if holds else f"¬ ({prop})"
    return f"example : {goal} := by decide +kernel"


def value_command(call: str, ret: ValueType, kernel: bool) -> str:
    if kernel:
        term, _ = projection(ret, call)
        return f"#reduce {term}"
    return f"#eval! ({call})"


def equality_command(call: str, expected: str, kernel: bool) -> str:
    """Prints ``true``/``false``: does the call equal the expected value under ``==``?"""
    term = f"(({call}) == ({expected}))"
    return f"#reduce {term}" if kernel else f"#eval! {term}"


PROBE = re.compile(r"^set_option maxHeartbeats (\d+) in ")
"""The prefix of a check under a heartbeat budget of its own (:func:`probed`)."""


def probed(command: str, heartbeats: int) -> str:
    """``command`` under a heartbeat budget of its own (what :data:`PROBE` strips)."""
    return f"set_option maxHeartbeats {int(heartbeats)} in {command}"


def check_command(term: str) -> str:
    return f"#check ({term})"


def plausible_command(prop: str, unfold: str, postcond: bool) -> str:
    lines = [f"example : {prop} := by", f"  unfold {unfold}",
             "  simp_all! (config := { failIfUnchanged := false })"]
    if postcond:
        lines.append("  simp (config := { failIfUnchanged := false }) [*]")
    lines.append("  " + PLAUSIBLE_TACTIC)
    return "\n".join(lines)


SENTINEL = "#check (Nat.zero)"
"""A cheap command whose information message proves Lean got past a unit."""


# ---------------------------------------------------------------- file layout


@dataclass
class Unit:
    namespace: str
    variant: Variant
    checks: list[str] = field(default_factory=list)


@dataclass
class Layout:
    text: str
    imports: list[str]
    dropped_imports: list[str]
    header: tuple[int, int]
    definitions: list[tuple[int, int]]  # per unit
    checks: list[list[tuple[int, int]]]  # per unit, per check
    sentinels: list[int]  # per unit: the line of its sentinel
    spans: list[tuple[int, int]]  # per unit: every line it occupies
    ready: int = 0  # the line of the header's own sentinel: Lean got past its start


def namespace_for(task_id: str, index: int) -> str:
    return f"VS_{re.sub(r'[^A-Za-z0-9_]', '_', task_id)}_{index}"


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, text: str) -> tuple[int, int]:
        start = len(self.lines) + 1
        self.lines.extend(text.split("\n"))
        return start, len(self.lines)


def covered_import(module: str, imports: Sequence[str]) -> bool:
    """Is ``module`` already imported by the runner's ``imports``? ``Std`` imports the
    whole of Std (on the WASM Lean 4.28, ``import Std`` alone elaborates
    ``Std.HashSet.insert`` and ``Std.HashMap.insert``). Importing it again changes
    nothing in the file, but it would change the file's base: a Lean session serves
    only files of its own base, so each file with a task's ``import Std.Data.HashSet``
    started a session of its own (about a minute on WASM)."""
    return "Std" in imports and module.startswith("Std.")


def layout_file(
    units: Sequence[Unit],
    *,
    kernel: bool,
    max_heartbeats: int,
    allow_import: object = is_core_import,
    prelude: str = "",
    imports: Sequence[str] = (),
    local_prelude: str = "",
) -> Layout:
    """The text of one Lean file holding ``units``, and where each piece landed.

    ``imports`` (the runner's own, e.g. for compiled evaluation) come first;
    ``prelude`` (top-level declarations: the runner's compiled-evaluation prelude)
    goes after the options, outside every unit. Up to there the text is the file's
    *base*, shared by every file of a backend (a Lean session runs it once:
    :mod:`session`); ``local_prelude`` (this file's compatibility definitions)
    follows it. The messages of both count as the header's.
    """
    wanted: list[str] = list(imports)
    for u in units:
        for mod in u.variant.imports():
            if mod not in wanted and not covered_import(mod, imports):
                wanted.append(mod)
    keep = [m for m in wanted if allow_import(m)]  # type: ignore[operator]
    dropped = [m for m in wanted if m not in keep]
    w = _Writer()
    head = [f"import {m}" for m in keep] + [
        f"set_option maxHeartbeats {int(max_heartbeats)}",
        "set_option format.width 100000000",
        "set_option linter.unusedVariables false",
    ]
    if not kernel:  # #eval prints by Repr, whole: through ToExpr it elides long values (⋯)
        head.append("set_option eval.pp false")
    if prelude.strip():
        head += ["", prelude.strip("\n")]
    head += ["", session.BASE_END]
    if local_prelude.strip():
        head += ["", local_prelude.strip("\n")]
    # A message as soon as the imports and the prelude are through: Lean's silence is
    # then the first check's (the runner's stall clock restarts at each message), and a
    # stop before it is Lean's own, not a unit's.
    head += ["", SENTINEL]
    header = w.add("\n".join(head))
    ready = header[1]
    defs: list[tuple[int, int]] = []
    checks: list[list[tuple[int, int]]] = []
    sentinels: list[int] = []
    spans: list[tuple[int, int]] = []
    for u in units:
        w.add("")
        first = w.add(f"namespace {u.namespace}")[0]
        if kernel:
            w.add("noncomputable section")
        defs.append(w.add(u.variant.definitions()))
        w.add("")
        checks.append([w.add(c) for c in u.checks])
        sentinels.append(w.add(SENTINEL)[0])
        if kernel:
            w.add("end")
        spans.append((first, w.add(f"end {u.namespace}")[1]))
    return Layout("\n".join(w.lines) + "\n", keep, dropped, header, defs, checks, sentinels,
                  spans, ready)


@dataclass
class Attributed:
    """The messages of one file, sorted to where they belong."""

    header: list[LeanMessage]
    definitions: list[list[LeanMessage]]
    checks: list[list[list[LeanMessage]]]
    sentinel_seen: list[bool]
    ready: bool = False  # the header's sentinel printed: Lean got past its start


def attribute(layout: Layout, messages: Sequence[LeanMessage]) -> Attributed:
    """Map each message to its check, unit or the header, by line number."""
    owners: dict[int, tuple[str, int, int]] = {}
    for ui, (a, b) in enumerate(layout.spans):  # namespace/end lines count as definitions
        for line in range(a, b + 1):
            owners[line] = ("def", ui, -1)
    for ui, (a, b) in enumerate(layout.definitions):
        for line in range(a, b + 1):
            owners[line] = ("def", ui, -1)
    for ui, ranges in enumerate(layout.checks):
        for ci, (a, b) in enumerate(ranges):
            for line in range(a, b + 1):
                owners[line] = ("check", ui, ci)
    for ui, line in enumerate(layout.sentinels):
        owners[line] = ("sentinel", ui, -1)
    out = Attributed([], [[] for _ in layout.definitions],
                     [[[] for _ in r] for r in layout.checks],
                     [False] * len(layout.sentinels))
    for msg in messages:
        kind, ui, ci = owners.get(msg.line, ("header", -1, -1))
        if kind == "check":
            out.checks[ui][ci].append(msg)
        elif kind == "def":
            out.definitions[ui].append(msg)
        elif kind == "sentinel":
            out.sentinel_seen[ui] = out.sentinel_seen[ui] or msg.severity == "information"
        elif msg.line == layout.ready and msg.severity == "information":
            out.ready = True
        else:
            out.header.append(msg)
    return out
