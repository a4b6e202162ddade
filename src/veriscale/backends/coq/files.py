"""A ``coqc`` file of checks: what a check and a unit are, how a file of them is
rendered, and how ``coqc``'s output is read back.

Each task context (ground truth, or a candidate's code or spec) is one ``Module`` of
the file (consecutive ones with the same leading imports inside one enclosing module
that makes them once), each check one evaluation after a marker carrying a per-file nonce, so
answers map back to checks whatever the values print; each check has its own time
limit inside the file (:func:`check_tactic`). Pure text in, text out: running the
file is :mod:`veriscale.backends.coq.running`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from veriscale.backends.coq.lexer import LexError, sentences
from veriscale.backends.coq.literal import NAT_DIGITS_SCOPE

CHECK_LIBS = "Coq.ZArith.ZArith Coq.Strings.String Coq.Strings.Ascii Coq.Lists.List"
CHECK_IMPORTS = ("Import Coq.ZArith.BinIntDef Coq.Strings.String Coq.Strings.Ascii "
                 "Coq.Lists.List.ListNotations.")
"""What a check's literals and printed values need after any context, in every unit:
the notations of ``Z`` numerals, strings, chars and lists. ``BinIntDef`` declares
the ``Z`` numerals; importing all of ``ZArith`` again (its hints and instances) in
every unit cost about 26 ms a unit, three quarters of a mutant file's ``coqc`` time."""


Lits = tuple[tuple[str, str | None], ...]
"""Rendered arguments of a check: each literal with its standard Coq type (or None)."""


def applied(head: str, lits: Lits) -> Check:
    """The check ``head lit1 lit2 ...``."""
    return Check(" ".join([head, *(lit for lit, _ in lits)]), head=head, args=lits)


@dataclass
class Check:
    """One ``Compute``: ``expr`` is a Coq term; the answer is text or an error.

    With ``args`` (each a literal and its standard Coq type, or ``None`` where it has
    none), ``expr`` is ``head`` applied to those literals, and a literal that several
    checks of a file share is elaborated once for all of them (see :func:`render_file`).
    """

    expr: str
    answer: str | None = None
    error: tuple[str, str] | None = None  # (kind, message); kind: error/timeout/memory/context
    head: str = ""
    args: Lits = ()


@dataclass
class Unit:
    """A module: the definitions the checks need, and the checks."""

    context: str
    checks: list[Check]
    trusted: bool  # the ground truth (its failures are the checker's, not a candidate's)
    requires: list[str] = field(default_factory=list)
    strikes: int = 0  # checks of this unit that exceeded their time limit (memory: not)


def hoist_requires(text: str) -> tuple[list[str], str]:
    """Move ``Require`` to the top of the file (inside a module it is fragile);
    what stays is ``Import``/``Export`` of the same libraries, in place."""
    try:
        items = sentences(text)
    except LexError:
        return [], text
    requires: list[str] = []
    out = text
    for s in reversed(items):
        m = re.match(r"(From\s+\S+\s+)?Require\s+(Import\s+|Export\s+)?(.*)$", s.text, re.S)
        if m is None:
            continue
        libs = " ".join(m.group(3).split())
        requires.insert(0, f"{m.group(1) or ''}Require {libs}.")
        verb = (m.group(2) or "").strip()
        keep = f"{verb} {libs}." if verb else ""
        out = out[:s.start] + keep + out[s.end:]
    return requires, out


def check_tactic(nonce: str, check_timeout: int, budget: int) -> list[str]:
    """The file's one check runner (names carry the nonce, so no context can
    shadow it or forge its markers).

    A unit's checks run as tactic sentences of one ``Goal True`` proof. Each
    evaluates its term by ``eval vm_compute`` (what ``Compute`` runs) under Ltac's
    ``timeout``; ``first`` turns a timeout into a printed marker and records it
    as a hypothesis. Once ``budget`` such hypotheses are in the proof, the
    unit's remaining checks (larger ones: a unit runs smallest first) print
    *skipped* instead of spending their limits. A timeout only abandons an
    evaluation, so every printed value is what ``Compute`` would print. The
    term is elaborated outside ``first``: an ill-typed check is an error located
    by its line.
    """
    strikes = ", ".join(f"H{i} : vsq{nonce}_strike" for i in range(budget))
    return [
        f"Definition vsq{nonce}_strike : Prop := True.",
        f"Ltac vsq{nonce}_run e := tryif (match goal with {strikes} |- _ => idtac end) "
        f"then idtac \"vsq{nonce}!skipped\" else first [ timeout {check_timeout} "
        f"(let v := eval vm_compute in e in idtac v; idtac \"vsq{nonce}$\") "
        f"| idtac \"vsq{nonce}!timeout\"; assert vsq{nonce}_strike by exact I ].",
    ]


SHARED_UNIT = -1
"""The unit number of the shared literals' module in a file's line map."""


def shared_literals(units: Sequence[Unit], min_length: int = 12) -> dict[tuple[str, str], int]:
    """The literals (with their types) that two or more checks of ``units`` pass:
    elaborating a literal (numerals through their notations, list syntax) costs
    as much as evaluating a small check, and an input recurs in every adversary's
    unit. Short literals are not worth a name."""
    counts: Counter[tuple[str, str]] = Counter()
    for u in units:
        for c in u.checks:
            for lit, ty in c.args:
                if ty is not None and len(lit) >= min_length:
                    counts[(lit, ty)] += 1
    shared = sorted(k for k, n in counts.items() if n > 1)
    return {k: i for i, k in enumerate(shared)}


def render_file(units: Sequence[Unit], nonce: str, check_timeout: int, budget: int = 3,
                share: bool = True) -> tuple[str, list[tuple[int, int, int, int | None]]]:
    """The file for ``units`` and the line map ``(first, last, unit, check|None)``.

    A unit's ``strikes`` (timeouts of earlier runs; a memory exhaustion is no strike) are
    re-asserted at the start of its proof, so a rerun keeps to the same budget.
    With ``share``, literals passed by several checks are defined once, before any
    context, in a module of their own (its imports end with it), and the checks
    name them; that module's lines map to unit :data:`SHARED_UNIT`. Defined there,
    no context can change how an input literal reads.
    """
    lines: list[str] = []
    spans: list[tuple[int, int, int, int | None]] = []
    seen: set[str] = set()
    for u in units:
        for r in u.requires:
            if r not in seen:
                seen.add(r)
                lines.append(r)
    lines.append(f"Require {CHECK_LIBS}.")
    lines.append(NAT_DIGITS_SCOPE)
    lines.extend(check_tactic(nonce, check_timeout, budget))
    names = shared_literals(units) if share else {}
    if names:
        first = len(lines) + 1
        lines += [f"Module VsqL{nonce}.", CHECK_IMPORTS]
        lines += [f"Definition L{i} : {ty} := {lit}." for (lit, ty), i in names.items()]
        lines.append(f"End VsqL{nonce}.")
        spans.append((first, len(lines), SHARED_UNIT, None))

    def term(c: Check) -> str:
        if not names or not c.args:
            return c.expr
        parts = [f"VsqL{nonce}.L{names[(lit, ty)]}" if (lit, ty) in names else lit
                 for lit, ty in c.args]
        return " ".join([c.head, *parts])

    n = 0
    group: tuple[str, ...] = ()
    opened = 0
    for ui, u in enumerate(units):
        prefix, body = import_prefix(u.context)
        if prefix != group:
            if group:
                lines.append(f"End VsqG{nonce}_{opened}.")
            group, opened = prefix, ui
            if group:
                # units of one task share their imports: made once, in an enclosing
                # module, instead of once in each unit (Import ZArith costs 26 ms)
                lines.append(f"Module VsqG{nonce}_{opened}.")
                first = len(lines) + 1
                lines.extend(group)
                spans.append((first, len(lines), ui, None))
        # the file's nonce (secrets.token_hex) in the name: no candidate can name
        # another's module, or the ground truth's, from inside its own
        lines.append(f"Module VsqU{nonce}_{ui}.")
        first = len(lines) + 1
        lines.extend(body.splitlines())
        lines.append(CHECK_IMPORTS)
        spans.append((first, len(lines), ui, None))
        lines.append("Goal True.")
        lines.extend([f"assert vsq{nonce}_strike by exact I."] * min(u.strikes, budget))
        for ci, c in enumerate(u.checks):
            lines.append(f"idtac \"vsq{nonce}_{n}\"; vsq{nonce}_run constr:({term(c)}).")
            spans.append((len(lines), len(lines), ui, ci))
            n += 1
        lines.append("Abort.")
        lines.append(f"End VsqU{nonce}_{ui}.")
    if group:
        lines.append(f"End VsqG{nonce}_{opened}.")
    return "\n".join(lines) + "\n", spans


_IMPORT_LINE = re.compile(r"(?:(?:Import|Export)(?:\s+[\w.']+)+|(?:Local\s+)?(?:Open|Close)\s+"
                          r"Scope\s+\w+)\s*\.\s*")


def import_prefix(context: str) -> tuple[tuple[str, ...], str]:
    """The leading import and scope lines of ``context`` (blank lines among them), and
    the rest. Made in an enclosing module, they leave the rest in the same state."""
    lines = context.splitlines()
    k = 0
    while k < len(lines) and (not lines[k].strip() or _IMPORT_LINE.fullmatch(lines[k])):
        k += 1
    prefix = tuple(line for line in lines[:k] if line.strip())
    return prefix, "\n".join(lines[k:])


TIMED_OUT = "\0timeout"  # answers that are not values: the check ran out of time,
SKIPPED = "\0skipped"  # or was not run because its unit had used up its budget


def read_answers(stdout: str, nonce: str) -> dict[int, str]:
    """Check number → the printed value of its evaluation, or ``TIMED_OUT`` /
    ``SKIPPED``. A check whose marker printed but whose value did not (the
    process died in it) has no answer."""
    out: dict[int, str] = {}
    marks = list(re.finditer(rf"^vsq{nonce}_(\d+)\n", stdout, re.M))
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(stdout)
        seg = stdout[m.end():end]
        if seg.startswith(f"vsq{nonce}!timeout\n"):
            out[int(m.group(1))] = TIMED_OUT
        elif seg.startswith(f"vsq{nonce}!skipped\n"):
            out[int(m.group(1))] = SKIPPED
        else:
            cut = seg.find(f"\nvsq{nonce}$\n")
            if cut >= 0:
                out[int(m.group(1))] = seg[:cut].strip()
    return out


_LOCATION = re.compile(r'File "[^"]*", line (\d+), characters \d+-\d+:\n')


def error_line(stderr: str) -> tuple[int | None, str]:
    found = list(_LOCATION.finditer(stderr))
    if not found:
        return None, stderr.strip()[-500:]
    last = found[-1]
    return int(last.group(1)), stderr[last.end():].strip()[:500]


def big_nat_literal(text: str, bound: int) -> int | None:
    """A literal above ``bound`` written in ``nat`` (``N%nat``, or inside a
    ``(...)%nat`` group): evaluating the text would build it in unary."""
    found = [int(m.group(1)) for m in re.finditer(r"\b(\d+)\s*%nat\b", text)]
    for m in re.finditer(r"\(([^()]*)\)\s*%nat\b", text):
        found += [int(n) for n in re.findall(r"\b\d+\b", m.group(1))]
    big = [n for n in found if n > bound]
    return max(big) if big else None




