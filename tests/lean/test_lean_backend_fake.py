"""LeanBackend end to end against a fake ``lean`` executable (no Lean needed).

The fake interprets the command forms the backend writes for one tiny task
(``F x = 2 * x`` with precondition ``x > 0``), so the whole path (rendering,
packing, running a subprocess, JSON parsing, attribution by line, verdicts)
runs for real. Special inputs simulate failures: 13 has no ``Decidable``
instance, 99 hangs (timeout).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tool_scripts import python_script
from veriscale.backends import isolation
from veriscale.backends.base import (
    Implementation,
    Label,
    Spec,
    Verdict,
    prover_processes,
    reasons_of,
)
from veriscale.backends.lean.backend import LeanBackend
from veriscale.backends.lean.kernel_route import KERNEL_SAMPLE
from veriscale.backends.lean.messages import CheckOutput
from veriscale.backends.lean.runner import NativeRunner
from veriscale.backends.lean.sections import LeanSections, lean_sections
from veriscale.backends.registry import make_backend
from veriscale.benchmark.model import ExpectedPair, Signature, Task

FAKE = r'''
import json, os, re, sys, time
path = sys.argv[-1]
lines = open(path).read().splitlines()

BUF = None  # a batch's answers, collected instead of printed

def say(line, text, severity="information"):
    if BUF is not None:
        BUF.append((severity, text))
        return
    print(json.dumps({"severity": severity, "data": text, "fileName": path,
                      "pos": {"line": line, "column": 0}, "endPos": {"line": line, "column": 1},
                      "kind": "[anonymous]"}), file=OUT, flush=True)

def ints(text):
    return [int(x) for x in re.findall(r"-?\d+", text)]

def one(i, line):
    budget = re.match(r"set_option maxHeartbeats (\d+) in ", line)
    if budget:  # under the heartbeat probe: 4141 needs 50000, 4242 and 4244 the full budget
        line, given = line[budget.end():], int(budget.group(1))
        if (re.search(r"decide \(\w+_precond \(?424[24]\)?\)$", line) and given < 400000
                or re.search(r"decide \(\w+_precond \(?4141\)?\)$", line) and given < 50000):
            say(i, "(deterministic) timeout, maximum number of heartbeats", "error")
            return
    if re.search(r"decide \(\w+_precond \(?4343\)?\)$", line):
        say(i, "(deterministic) timeout, maximum number of heartbeats", "error")
        return
    if "BROKEN" in line:
        say(i, "unknown identifier 'BROKEN'", "error")
    if re.match(r"\s+stop$", line):  # Lean's `stop` tactic: `repeat sorry`, a warning only
        say(i, "declaration uses 'sorry'", "warning")
    if "Array.mkArray" in line and "def Array.mkArray" not in "\n".join(lines):
        say(i, "Unknown constant `Array.mkArray`", "error")
    m = re.match(r"#eval! decide \((\w+)_precond (.*)\)$", line)
    if m:
        (x,) = ints(m.group(2))
        if x == 99:  # runs away, using CPU
            end = time.time() + 60
            while time.time() < end:
                pass
        if x in (77, 57, 7777):  # dies quietly with an ordinary exit status, like WASM's
            sys.exit(1)
        if x == 5757:  # fills its memory
            print("INTERNAL PANIC: out of memory", file=sys.stderr, flush=True)
            sys.exit(1)
        if x == 88:  # true once whoever watches the run has heard of the checks before it
            waited = 0.0
            while not os.path.exists(LOG + ".go") and waited < 20:
                time.sleep(0.05)
                waited += 0.05
            say(i, str(os.path.exists(LOG + ".go")).lower())
            return
        if x == 13:
            say(i, "failed to synthesize\n  Decidable (F_precond 13)", "error")
            return
        if x == 666:  # an input Lean refuses to elaborate, as its #check does
            say(i, "type mismatch\n  666\nhas type Nat", "error")
            return
        if x in (3131, 3232):  # reads a[i]! out of bounds: the panic, then default's answer
            say(i, "PANIC at F_precond: index out of bounds")
            say(i, "false")
            return
        say(i, "true" if x > 0 else "false")
        return
    m = re.match(r"#eval! decide \((\w+)_postcond (.*) \(by sorry\)\)$", line)
    if m:
        x, r = ints(m.group(2))
        say(i, "true" if r == 2 * x else "false")
        return
    m = re.match(r"#eval! \(\((\w+) (.*) \(by sorry\)\) == \((.*)\)\)$", line)
    if m:  # a code test compared in Lean, as VERINA's #guard
        (x,), (e,) = ints(m.group(2)), ints(m.group(3))
        if x == 77:
            sys.exit(1)
        say(i, "true" if 2 * x == e else "false")
        return
    m = re.match(r"#eval! \((\w+) (.*) \(by sorry\)\)$", line)
    if m:
        (x,) = ints(m.group(2))
        if x == 77:
            sys.exit(1)
        say(i, str(2 * x))
        return
    m = re.match(r"#reduce decide \((\w+)_precond (.*)\)$", line)
    if m:  # kernel mode: 55 gets stuck in #reduce, 56 and 57 in the kernel too
        (x,) = ints(m.group(2))
        if x == 7777:  # more than any heartbeat budget
            say(i, "(deterministic) timeout, maximum number of heartbeats", "error")
            return
        say(i, "Decidable.rec (fun h => false) ..." if x in (55, 56, 57) else str(x > 0).lower())
        return
    m = re.match(r"example : (¬ )?\((\w+)_precond (.*)\) := by decide \+kernel$", line)
    if m:
        (x,) = ints(m.group(3))
        if x in (56, 57, 3232) or (m.group(1) is None) != (x > 0):
            say(i, "decide failed", "error")
        return
    m = re.match(r"#reduce \(\(F (.*) \(by first \| decide \| sorry\)\) == \((.*)\)\)$", line)
    if m:  # a kernel-mode code test: 55 gets stuck in #reduce (as code over Array)
        (x,), (e,) = ints(m.group(1)), ints(m.group(2))
        say(i, "Array.anyM.loop ..." if x == 55 else str(2 * x == e).lower())
        return
    m = re.match(r"example : (¬ )?\((.*==.*) = true\) := by decide \+kernel$", line)
    if m:
        x, e = ints(m.group(2))
        if (m.group(1) is None) != (2 * x == e):
            say(i, "decide failed", "error")
        return
    if line.startswith("#check"):
        if "666" in line:  # an input Lean refuses to elaborate
            say(i, "type mismatch\n  666\nhas type Nat", "error")
            return
        say(i, line[len("#check "):] + " : Prop")
        return
    if line.startswith("example : ¬"):
        say(i, "Found a counter-example!", "error")
    elif line.startswith("example"):
        say(i, "Unable to find a counter-example", "warning")


HELPERS = {}  # a batch helper's name -> how a call of it reads as a single check


def helper(i, line, body):
    """``def «vs batch k» (x : Int) ... := body``: what its calls mean; an unknown
    shape is an elaboration error on its line (as a missing instance would be)."""
    name = re.match(r"def («vs batch \d+»)", line).group(1)
    if "sorry" in body:  # the proof of the precondition, as Lean then says
        say(i, "declaration uses 'sorry'", "warning")
    if "NO_INSTANCE" in body:
        say(i, "failed to synthesize\n  Decidable (F_postcond x vsOutput sorry)", "error")
        return
    for pat, form in ((r"decide \((\w+_precond)", "#eval! decide ({fn} {args})"),
                      (r"decide \((\w+_postcond)", "#eval! decide ({fn} {args} (by sorry))"),
                      (r"\((\w+) .*\) == vsOutput", "#eval! (({fn} {args} (by sorry)) == ({exp}))"),
                      (r"(\w+) ", "#eval! ({fn} {args} (by sorry))")):
        m = re.match(pat, body)
        if m:
            HELPERS[name] = (m.group(1), form)
            return


def expand(term):
    m = re.match(r"(«vs batch \d+») (.*)$", term)
    if not m or m.group(1) not in HELPERS:
        return None
    fn, form = HELPERS[m.group(1)]
    args, exp = m.group(2), ""
    if "{exp}" in form:
        args, exp = re.match(r"(.*) \((.*)\)$", args).groups()
    return form.format(fn=fn, args=args, exp=exp)


def data_batch(i, line, budget):
    """A batch whose values are data: its helper over the rows of a JSON string; a row
    holding 4545 makes the decoding fail as the decoder does (a panic, then [])."""
    global BUF
    name = re.match(r"#eval! \(_root_\.List\.map \(fun vsRow => («vs batch \d+»)", line).group(1)
    text = re.match(r'\s+\(_root_\.VeriScaleData\.rows .* (".*")\)\)$', lines[i]).group(1)
    rows = json.loads(json.loads(text))
    if "4545" in text:
        say(i, "PANIC at VeriScaleData.rows: VeriScale data not decoded: no 4545")
        say(i, "[]")
        return
    prefix = f"set_option maxHeartbeats {budget // len(rows)} in " if budget else ""
    got = []
    for r in rows:
        raw = r if isinstance(r, list) else [r]
        values = [f"({v})" if v < 0 else str(v) for v in raw]
        if "{exp}" in HELPERS[name][1]:  # the expected value, in the test's parentheses
            values[-1] = f"({raw[-1]})"
        args = " ".join(values)
        BUF = []
        one(i, prefix + expand(f"{name} {args}"))
        got.append(BUF)
    BUF = None
    errors = [m for ms in got for m in ms if m[0] == "error"]
    for _, text in errors:
        say(i, text, "error")
    if not errors:
        say(i, "[" + ", ".join(t for ms in got for _, t in ms) + "]")


OUT = sys.stdout


def process():
    global BUF
    skip = set()
    for i, line in enumerate(lines, 1):
        if i in skip:
            continue
        if line.startswith("def «vs batch"):
            helper(i, line, lines[i].strip())
            skip.add(i + 1)
            continue
        if line.startswith("#eval! (_root_.List.map (fun vsRow =>"):
            before = re.match(r"set_option maxHeartbeats (\d+) in$", lines[i - 2])
            data_batch(i, line, int(before.group(1)) if before else 0)
            skip.add(i + 1)
            continue
        budget = re.match(r"set_option maxHeartbeats (\d+) in$", line)
        head = i + 1 if budget else i
        if head <= len(lines) and lines[head - 1] in ("#eval! [", "example : List Prop := ["):
            check = lines[head - 1].startswith("example")  # a batch, one term a line
            terms, j = [], head
            while not lines[j - 1].endswith("]"):
                j += 1
                terms.append((j, lines[j - 1].strip().rstrip(",")))
            terms[-1] = (j, terms[-1][1][:-1])
            skip.update(range(head, j + 1))
            prefix = (f"set_option maxHeartbeats {int(budget.group(1)) // len(terms)} in "
                      if budget else "")
            got = []
            for at, t in terms:
                BUF = []
                if t.startswith("«vs batch"):
                    single = expand(t)
                    if single is None:
                        BUF.append(("error", "unknown identifier " + t.split("»")[0] + "»"))
                    else:
                        one(at, prefix + single)
                else:
                    one(at, prefix + ("#check " if check else "#eval! ") + t)
                got.append((at, BUF))
            BUF = None
            errors = [(at, m) for at, ms in got for m in ms if m[0] == "error"]
            for at, (_, text) in errors:  # each at its own term's line, as Lean reports them
                say(at, text, "error")
            if not errors and not check:  # an example that elaborates says nothing
                say(head, "[" + ", ".join(t for _, ms in got for _, t in ms) + "]")
            continue
        one(i, line)


print("[DEBUG:I] banner")
say(1, "VERISCALE_ADOPTED 0")  # as the compiled-evaluation prelude prints first
session = re.search(r'IO.FS.Handle.mk "([^"]+)" .read', "\n".join(lines))
if session is None:
    open(LOG, "a").write(path + "\n")
    process()
else:  # a Lean session (backends/lean/session.py): serve files until told to stop
    open(LOG + ".starts", "a").write(path + "\n")
    answers = re.search(r'IO.FS.Handle.mk "([^"]+)" .append', "\n".join(lines)).group(1)
    OUT = open(answers, "a")
    print("--VS-READY", file=OUT, flush=True)
    feed, pending = open(session.group(1)), ""
    while True:
        part = feed.readline()
        if not part:
            time.sleep(0.005)
            continue
        pending += part
        if not pending.endswith("\n"):
            continue
        name, pending = pending.strip(), ""
        if name == "--VS-QUIT":
            break
        # the file the backend wrote (kept with keep_files), as a file run logs it
        open(LOG, "a").write(os.path.abspath(name.removesuffix(".served")) + "\n")
        lines, HELPERS = open(name).read().splitlines(), {}
        process()
        print("--VS-DONE " + name, file=OUT, flush=True)
'''


_OPEN: list[LeanBackend] = []  # backends of the test running: their sessions end with it
_SESSIONS = [False]


@pytest.fixture(params=["files", "sessions"])
def fake_lean(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, Path]]:
    """The fake ``lean``; every test runs twice: a Lean process per file, and files
    served by Lean sessions (backends/lean/session.py), with the same answers."""
    log = tmp_path / "calls.log"
    exe = tmp_path / "lean"
    python_script(exe, f"LOG = {str(log)!r}\n" + FAKE)
    _SESSIONS[0] = request.param == "sessions"
    try:
        with isolation.using("none"):  # the fake writes its call log outside its work dir
            yield exe, log
    finally:
        while _OPEN:
            _OPEN.pop().close()
        _SESSIONS[0] = False


def _task(task_id: str = "toy_1") -> Task:
    sig = Signature.from_json({"name": "F", "parameters": [{"param_name": "x",
                                                           "param_type": "Int"}],
                               "return_type": "Int"})
    lean = LeanSections(precond="  x > 0", code="  2 * x", postcond="  result = 2 * x")
    return Task(task_id, "double", sig, tests=[ExpectedPair((3,), 6, [5])], reject_inputs=[(-1,)],
                sections={"lean": lean})


def _backend(exe: Path, tmp_path: Path, **kw: object) -> LeanBackend:
    runner = NativeRunner(lean_path=str(exe), timeout=float(kw.pop("timeout", 30)),  # type: ignore[arg-type]
                          work_dir=tmp_path / "work", memory_mb=None,
                          plausible=bool(kw.pop("plausible", False)))
    if "imports" in kw:  # as the WASM runner's compiled mode imports
        runner.compiled_imports = kw.pop("imports")  # type: ignore[assignment]
    elif _SESSIONS[0]:  # a session's loop is Lean's frontend: its base imports Lean
        runner.compiled_imports = ("Lean",)
        kw.setdefault("data", False)  # as without the import
    runner.sessions = _SESSIONS[0]
    be = LeanBackend(runner, **kw)  # type: ignore[arg-type]
    _OPEN.append(be)
    return be


def _calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_registry_builds_the_lean_backend(fake_lean: tuple[Path, Path]) -> None:
    exe, _ = fake_lean
    be = make_backend("lean", runner="native", lean_path=str(exe), workers=1, seed=3)
    assert be.name == "lean" and be.mode == "compiled"  # type: ignore[attr-defined]
    assert be.stats.extra["ignored_options"] == ["seed"]
    with pytest.raises(ValueError):
        make_backend("lean", runner="native", lean_path=str(exe), mode="interpreted")


def test_classify_run_and_postcondition_in_one_process(fake_lean, tmp_path) -> None:
    # single checks: 13 fails to elaborate, which in a batch costs the batch's other
    # terms one more file (test_batches_give_the_answers_of_single_checks)
    exe, log = fake_lean
    be = _backend(exe, tmp_path, batch_size=1)
    task = _task()
    cl, post, run = be.evaluate_many([
        ("classify", (task, [(1,), (-2,), (13,)])),
        ("postcondition_holds", (task, None, [((3,), 6), ((3,), 5)])),
        ("run", (task, None, [(4,), (-5,)])),
    ])
    # classify is two commands per input (syntax check + decide), still one process
    assert _calls(log) == 1 and be.stats.processes == 1 and be.stats.checks == 10
    assert [c.label for c in cl] == [Label.EXPECTED, Label.UNEXPECTED, Label.UNKNOWN]
    assert "no Decidable instance" in cl[2].detail and "Plausible is not available" in cl[2].detail
    assert post == [Verdict.TRUE, Verdict.FALSE]
    assert [(o.ok, o.value) for o in run] == [(True, 8), (True, -10)]


def test_plausible_stage_decides_what_decide_cannot(fake_lean, tmp_path) -> None:
    exe, log = fake_lean
    be = _backend(exe, tmp_path, batch_size=1, plausible=True)
    cl = be.classify(_task(), [(1,), (13,), ("ill-typed",)])
    assert cl[0].label == Label.EXPECTED and cl[0].stage == "decide"
    assert cl[1].label == Label.EXPECTED and cl[1].stage == "plausible"
    assert cl[2].label == Label.UNKNOWN and cl[2].stage == "syntax"
    assert _calls(log) == 2  # stage 1 file, then one file for stage 2


def test_timeout_is_unknown_and_costs_one_chunk(fake_lean, tmp_path) -> None:
    exe, _ = fake_lean
    be = _backend(exe, tmp_path, batch_size=1, timeout=3, chunk_size=1)
    got = be.precondition_holds(_task(), None, [(1,), (99,), (2,)])
    assert got == [Verdict.TRUE, Verdict.UNKNOWN, Verdict.TRUE]
    assert be.stats.extra["timeouts"] == 1 and be.stats.processes == 3
    be = _backend(exe, tmp_path, batch_size=1, timeout=3)
    got = be.precondition_holds_many([(_task("toy_a"), None, [(1,), (99,)]),
                                      (_task("toy_b"), None, [(2,), (44,)])])
    # Messages printed before the kill still count; the check that was running is
    # unknown, and the unreached one (another unit's) is retried in a file without it.
    # (Every unit's short checks go first, then every unit's longest: 1, 2, then 99, 44.)
    assert got == [[Verdict.TRUE, Verdict.UNKNOWN], [Verdict.TRUE, Verdict.TRUE]]
    assert be.stats.processes == 2
    # a unit's checks go smallest first: here the one that runs away comes last
    be = _backend(exe, tmp_path, batch_size=1, timeout=3)
    got = be.precondition_holds(_task(), None, [(1,), (99,), (2,)])
    assert got == [Verdict.TRUE, Verdict.UNKNOWN, Verdict.TRUE]
    assert be.stats.processes == 1


def test_a_check_that_runs_away_stops_its_file_not_the_run(fake_lean, tmp_path) -> None:
    """Compiled evaluation is not bounded by heartbeats: a file whose Lean falls
    silent for ``check_seconds`` after its first message is stopped; the check it was
    on is a timeout (UNKNOWN), its batch is asked again singly, the rest go on."""
    exe, _ = fake_lean
    be = _backend(exe, tmp_path, check_seconds=1.5, timeout=120)
    start = time.monotonic()
    # smallest first: 1, 2, 5, 99, 666, (-3); the batch runs away at 99, then 99 alone;
    # the function's checks no smaller than it are skipped (UNKNOWN), smaller go on
    got = be.classify(_task(), [(1,), (2,), (666,), (99,), (-3,), (5,)])
    assert [c.label for c in got] == [Label.EXPECTED, Label.EXPECTED, Label.UNKNOWN,
                                      Label.UNKNOWN, Label.UNKNOWN, Label.EXPECTED]
    assert got[3].detail.startswith("timeout")
    assert all("no larger than it ran over its time" in got[k].detail for k in (2, 4))
    assert time.monotonic() - start < 50 and be.stats.extra["timeouts"] == 2
    assert be.stats.extra["unbatched"] == 6  # the decide batch, asked singly
    assert be.runner.stall_seconds == 1.5
    kernel = _backend(exe, tmp_path, mode="kernel")
    assert kernel.runner.stall_seconds is None  # heartbeats bound kernel reduction


def test_a_resumed_run_does_not_pay_its_stops_again(fake_lean, tmp_path) -> None:
    """Stops are not cached as answers, but a run directory keeps its stop memory
    (``keep_stops``, the oracle cache's SQLite file): a new backend on the same store,
    as a resumed run makes, answers the stopped function's larger checks without
    starting Lean, with the stop's cause; a smaller one still runs."""
    from veriscale.backends.cache import OracleCache

    exe, log = fake_lean
    store = OracleCache(tmp_path / "oracle.sqlite")
    be = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False)
    be.keep_stops(store, "fake lean")
    (crashed,) = be.run(_task(), None, [(77,)])
    assert not crashed.ok and "infrastructure: Lean stopped" in crashed.error
    store.close()
    store = OracleCache(tmp_path / "oracle.sqlite")
    resumed = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False)
    resumed.keep_stops(store, "fake lean")
    before = _calls(log)
    (big,) = resumed.run(_task(), None, [(7777,)])
    assert not big.ok and big.inconclusive and "no larger than it stopped Lean" in big.error
    assert _calls(log) == before
    assert [o.ok for o in resumed.run(_task(), None, [(7,)])] == [True]
    other = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False, max_heartbeats=9999)
    other.keep_stops(store, "fake lean")  # other limits: the stop is not its own
    assert not other._stopped
    store.close()


def test_early_stop_costs_one_check(fake_lean, tmp_path) -> None:
    exe, log = fake_lean
    be = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False)
    # smallest first (1, 2, 13, 77, (-3)): 77 stops Lean, (-3) goes to a new file
    got = be.precondition_holds(_task(), None, [(13,), (1,), (77,), (2,), (-3,)])
    assert got == [Verdict.UNKNOWN, Verdict.TRUE, Verdict.UNKNOWN, Verdict.TRUE, Verdict.FALSE]
    assert _calls(log) == 2 and be.stats.extra["crashes"] == 1
    (c,) = be.classify(_task(), [(77,)])
    assert c.label == Label.UNKNOWN and "infrastructure: Lean stopped" in c.detail
    # Other inputs of the function that crashed Lean are skipped, other checks retried.
    be = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False)
    run, cl, post = be.evaluate_many([("run", (_task(), None, [(77,), (5,), (777,)])),
                                      ("classify", (_task(), [(1,)])),
                                      ("postcondition_holds", (_task(), None, [((1,), 2)]))])
    assert [o.ok for o in run] == [False, True, False] and "skipped" in run[2].error
    assert cl[0].label == Label.EXPECTED and post == [Verdict.TRUE]
    # ... in later requests too: a larger input is not asked (no Lean start), a smaller is
    before = _calls(log)
    (big,) = be.run(_task(), None, [(7777,)])
    assert not big.ok and big.inconclusive and "no larger than it stopped Lean" in big.error
    assert _calls(log) == before
    assert [o.ok for o in be.run(_task(), None, [(7,)])] == [True]
    be = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False, crash_retries=0)
    before = _calls(log)
    got = be.precondition_holds_many([(_task("toy_a"), None, [(77,)]),
                                      (_task("toy_b"), None, [(22,)])])
    # a stop is blamed on the unit Lean was on: even with no retries for a, b goes on
    assert got == [[Verdict.UNKNOWN], [Verdict.TRUE]]
    assert _calls(log) - before == 2  # a's 77 stopped the first file; b alone in the next
    be = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False, crash_retries=0)
    got = be.precondition_holds_many([(_task("toy_a"), None, [(77,)]),
                                      (_task("toy_b"), None, [(2,)])])
    assert got == [[Verdict.UNKNOWN], [Verdict.TRUE]]  # b's shorter check goes first


def _fallback(be: LeanBackend) -> dict[str, int]:
    """The kernel fallback's counts, without its per-round file accounting."""
    row = dict(be.stats.extra["kernel_fallback"])
    assert row.pop("files") >= row["rounds"]  # a round is a file at least
    return row


def test_what_crashes_compiled_evaluation_is_asked_of_the_kernel(fake_lean, tmp_path) -> None:
    """77 stops Lean in compiled mode: it and its function's other check behind it
    ((-3), larger) go to kernel reduction (one more file), which answers them; nothing
    else is re-asked."""
    exe, log = fake_lean
    be = _backend(exe, tmp_path, batch_size=1)
    got = be.precondition_holds(_task(), None, [(13,), (1,), (77,), (2,), (-3,)])
    assert got == [Verdict.UNKNOWN, Verdict.TRUE, Verdict.TRUE, Verdict.TRUE, Verdict.FALSE]
    assert _fallback(be) == {"asked": 2, "decided": 2, "rounds": 1}
    assert _calls(log) == 2 and be.stats.extra["crashes"] == 1


def test_what_ran_out_of_memory_is_not_asked_of_the_kernel(fake_lean, tmp_path) -> None:
    """A check that filled compiled Lean's memory keeps that cause (UNKNOWN); only the
    other crashes go to kernel reduction, which needs more memory, not less."""
    exe, _ = fake_lean
    be = _backend(exe, tmp_path, batch_size=1, crash_retries=0)
    got = be.precondition_holds_many([(_task("toy_a"), None, [(77,)]),
                                      (_task("toy_b"), None, [(5757,)])])
    assert got == [[Verdict.TRUE], [Verdict.UNKNOWN]]
    assert "out of memory" in got[1].reasons[0]
    assert _fallback(be) == {"asked": 1, "decided": 1, "rounds": 1, "out_of_memory": 1}


def test_the_kernel_is_asked_a_sample_before_the_rest(fake_lean, tmp_path) -> None:
    """57 stops compiled Lean and is stuck in the kernel too: of a request's twelve
    such checks, the kernel is asked its first two (KERNEL_SAMPLE); deciding none, it
    is not asked the other ten (they keep compiled mode's reason). Where a round
    decides at least half, the next round (twice as many) is asked; one decided of
    four is not enough."""
    assert KERNEL_SAMPLE == 2
    exe, _ = fake_lean
    be = _backend(exe, tmp_path, batch_size=1, crash_retries=0)
    got = be.precondition_holds(_task(), None, [(57,)] * 12)
    assert got == [Verdict.UNKNOWN] * 12
    assert all("infrastructure: Lean stopped" in r for r in got.reasons)
    assert _fallback(be) == {"asked": 2, "decided": 0, "not_asked": 10, "rounds": 1}
    be = _backend(exe, tmp_path, batch_size=1, crash_retries=0)
    got = be.precondition_holds(_task(), None, [(77,)] * 6 + [(57,)] * 6)
    assert got == [Verdict.TRUE] * 6 + [Verdict.UNKNOWN] * 6
    assert _fallback(be) == {"asked": 12, "decided": 6, "rounds": 3}  # 2, 4, then 6 of 8
    # half of the first round goes on; one of four in the second does not
    be = _backend(exe, tmp_path, batch_size=1, crash_retries=0)
    got = be.precondition_holds(_task(), None, [(77,), (57,), (57,), (57,), (57,)]
                                + [(77,)] * 7)
    assert got == [Verdict.TRUE] + [Verdict.UNKNOWN] * 4 + [Verdict.TRUE] + [Verdict.UNKNOWN] * 6
    assert _fallback(be) == {"asked": 6, "decided": 2, "not_asked": 6, "rounds": 2}
    # rounds grow (2, 4, 8, ...): a request goes on only while each decides half of it
    be = _backend(exe, tmp_path, batch_size=1, crash_retries=0)
    got = be.precondition_holds(_task(), None, [(77,)] * 8 + [(57,)] * 20)
    assert got == [Verdict.TRUE] * 8 + [Verdict.UNKNOWN] * 20
    assert _fallback(be) == {"asked": 14, "decided": 8, "not_asked": 14, "rounds": 3}
    # nor where a check ran out of the full heartbeat budget: the next round's are larger
    be = _backend(exe, tmp_path, batch_size=1, crash_retries=0)
    got = be.precondition_holds(_task(), None, [(77,)] + [(7777,)] * 12)
    assert got == [Verdict.TRUE] + [Verdict.UNKNOWN] * 12
    assert _fallback(be) == {"asked": 2, "decided": 1, "not_asked": 11, "rounds": 1}


def test_the_kernels_sample_is_per_function_not_per_request(fake_lean, tmp_path) -> None:
    """A task's inputs split over several requests (the outputs stage batches them) are
    one function to the kernel: its first round asks two of all of them, not two of
    each request, and where it decides none the others are not asked."""
    exe, _ = fake_lean
    be = _backend(exe, tmp_path, batch_size=1, crash_retries=0)
    task = _task()
    got = be.precondition_holds_many([(task, None, [(57,)] * 3) for _ in range(4)])
    assert got == [[Verdict.UNKNOWN] * 3] * 4
    assert _fallback(be) == {"asked": 2, "decided": 0, "not_asked": 10, "rounds": 1}
    # two functions (the ground truth and a candidate) each get their own sample
    be = _backend(exe, tmp_path, batch_size=1, crash_retries=0)
    spec = Spec(id="s", precond="  x > 0")
    got = be.precondition_holds_many([(task, None, [(57,)] * 3), (task, spec, [(57,)] * 3),
                                      (task, None, [(57,)] * 3)])
    assert _fallback(be) == {"asked": 4, "decided": 0, "not_asked": 5, "rounds": 1}


def test_a_task_that_keeps_crashing_lean_leaves_other_tasks_answered(fake_lean, tmp_path) -> None:
    # Three checks of one task stop Lean in turn; the next task's checks sat behind
    # them in the file. The crashing task goes last in each retry, so the other
    # task is answered before the retries run out (before: UNKNOWN, not retried).
    exe, log = fake_lean
    be = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False, crash_retries=2)
    bad, good = _task("toy_bad"), _task("toy_good")
    got = be.precondition_holds_many([(bad, None, [(77,), (77,), (77,), (1,)]),
                                      (good, None, [(2,), (-3,)])])
    assert got[1] == [Verdict.TRUE, Verdict.FALSE]
    assert got[0] == [Verdict.UNKNOWN] * 3 + [Verdict.TRUE]  # 1 goes first: smallest
    assert be.stats.extra["crashes"] == 3 and _calls(log) == 3


def test_a_task_whose_checks_keep_crashing_goes_to_the_kernel(fake_lean, tmp_path) -> None:
    """Four candidates of one task each crash compiled Lean on 77 (a crash's size says
    nothing there: on the WASM Lean a string reference crashed on ("a", "a")). After
    TASK_CRASHES crashes by the task's checks of one kind, its other checks of that
    kind start no Lean file: they go to the kernel with the crash's cause, and the
    kernel answers them. Another task's checks and kinds run as before."""
    from veriscale.backends.lean.running import TASK_CRASHES

    assert TASK_CRASHES == 3
    exe, log = fake_lean
    be = _backend(exe, tmp_path, batch_size=1)
    bad, good = _task("toy_bad"), _task("toy_good")
    specs = [Spec(id=f"s{i}", precond=f"  x > {i}") for i in range(4)]
    got = be.precondition_holds_many([(bad, spec, [(77,)]) for spec in specs]
                                     + [(good, None, [(77,)]), (good, None, [(2,)])])
    assert got == [[Verdict.TRUE]] * 6  # every crash answered by the kernel
    # three crashes of toy_bad; the fourth candidate's check skipped; toy_good's 77
    # still ran compiled (its own crash)
    assert be.stats.extra["crashes"] == TASK_CRASHES + 1
    assert _fallback(be)["asked"] == 5 and _fallback(be)["decided"] == 5
    # ... in later requests too, without a Lean start; a postcondition still runs
    before = _calls(log)
    (again,) = be.precondition_holds_many([(bad, Spec(id="s9", precond="  x > 9"), [(77,)])])
    assert again == [Verdict.TRUE] and be.stats.extra["crashes"] == TASK_CRASHES + 1
    assert _calls(log) == before + 1  # the kernel's file only
    assert be.postcondition_holds(bad, None, [((1,), 2)]) == [Verdict.TRUE]
    # without the kernel fallback nothing is skipped: each crash is its own
    be = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False)
    got = be.precondition_holds_many([(bad, spec, [(77,)]) for spec in specs])
    assert got == [[Verdict.UNKNOWN]] * 4 and be.stats.extra["crashes"] == 4


@given(st.integers(1, 200_000), st.integers(1_000, 20_000), st.integers(1, 8),
       st.integers(1, 5_000))
@example(4, 1000, 3, 1)  # rounding the size up once left a worker idle
def test_balanced_files_fit_the_cap_and_fill_whole_rounds_of_workers(total, cap, workers,
                                                                     split) -> None:
    from veriscale.backends.lean.files import balanced_size

    size = balanced_size(total, cap, workers, split)
    files = -(-total // size)
    assert 1 <= size <= cap
    assert files >= min(workers, total // split)  # a worker idles only beside a small round
    if -(-total // cap) > workers:
        assert files % workers == 0  # no round of files leaves a worker idle


def test_chunking_and_several_tasks_per_file(fake_lean, tmp_path) -> None:
    exe, log = fake_lean
    be = _backend(exe, tmp_path, chunk_size=2)
    assert be.precondition_holds(_task(), None, [(1,), (2,), (-3,), (4,), (5,)]) == [
        Verdict.TRUE, Verdict.TRUE, Verdict.FALSE, Verdict.TRUE, Verdict.TRUE]
    assert _calls(log) == 3
    be = _backend(exe, tmp_path, chunk_size=50, tasks_per_file=2)
    tasks = [_task(f"toy_{i}") for i in range(3)]
    res = be.classify_many([(t, [(i + 1,), (-i,)]) for i, t in enumerate(tasks)])
    assert [[c.label for c in r] for r in res] == [[Label.EXPECTED, Label.UNEXPECTED]] * 3
    # two units a file: every task's short checks, then the long ones of tasks 1 and 2
    assert be.stats.processes == 3


def test_bad_items_and_untrusted_code_never_raise(fake_lean, tmp_path) -> None:
    exe, log = fake_lean
    be = _backend(exe, tmp_path)
    task = _task()
    reasons = be.check_inputs(task, [(1,), ("not an int",)])
    assert reasons[0] is None and reasons[1].startswith("ill_typed")
    cheat = Implementation("def F (x : Int) : Int := sorry")
    before = _calls(log)
    (out,) = be.run(task, cheat, [(1,)])
    assert not out.ok and out.failure_kind == "compile" and "sorry" in out.error
    assert be.compile(task, cheat) is not None and _calls(log) == before
    bad_spec = Spec(precond="x > 0 ∨ (by exact sorry)")
    assert be.precondition_holds(task, bad_spec, [(1,)]) == [Verdict.UNKNOWN]


def test_compile_reports_definition_errors(fake_lean, tmp_path) -> None:
    exe, _ = fake_lean
    be = _backend(exe, tmp_path)
    task = _task()
    assert be.compile(task) is None
    good = Implementation("def F (x : Int) : Int := x + x")
    broken = Implementation("def F (x : Int) : Int := BROKEN x")
    assert be.compile_many([(task, good, None), (task, broken, None)]) == [
        None, "compile: unknown identifier 'BROKEN'"]
    assert be.stats.processes == 2  # GT alone, then both candidates in one file
    # An implementation without h_precond is called without the proof argument.
    (out,) = be.run(task, good, [(2,)])
    assert not out.ok  # the fake only answers calls written with `(by sorry)`
    (out,) = be.run(task, Implementation("def F (x : Int) (h_precond : F_precond x) : Int := x"),
                    [(2,)])
    assert out.ok and out.value == 4


def test_kernel_values_of_opaque_types_are_unknown() -> None:
    from veriscale.backends.lean.messages import CheckOutput, value_outcome
    from veriscale.backends.lean.process import LeanMessage
    from veriscale.values import parse_type

    stuck = CheckOutput([LeanMessage("information", 5, 0, 5, 1, "{ entries := [..].mergeSort }")])
    out = value_outcome(stuck, parse_type("Map Int Int"), kernel=True)
    assert not out.ok and out.failure_kind == "unknown"
    assert value_outcome(stuck, parse_type("Map Int Int"), kernel=False).ok  # #eval Repr text


def test_classify_includes_the_syntax_filter_in_the_same_file(fake_lean, tmp_path) -> None:
    from veriscale.pipeline.stages import CandidateInput, stage_classify

    exe, log = fake_lean
    be = _backend(exe, tmp_path, batch_size=1)
    task = _task()
    cands = [CandidateInput((1,), "a"), CandidateInput((666,), "b"), CandidateInput((-2,), "c"),
             CandidateInput((13,), "d")]
    data = stage_classify(task, cands, be)
    assert _calls(log) == 1  # before: one file for the syntax filter, one for decide
    c = data.counts
    assert (c["syntax_rejected"], c["expected_inputs"], c["unexpected_inputs"],
            c["unknown_inputs"]) == (1, 1, 1, 1)
    assert data.syntax_rejected[0]["reason"].startswith("ill_typed: type mismatch")
    assert data.syntax_rejected[0]["input"] == {"x": 666}


def test_ill_typed_error_on_the_check_line_is_a_syntax_rejection() -> None:
    from veriscale.backends.lean.messages import classify_answer
    from veriscale.backends.lean.process import LeanMessage

    def out(*msgs: tuple[str, str]) -> CheckOutput:
        return CheckOutput([LeanMessage(sev, 1, 0, 1, 1, text) for sev, text in msgs])

    bad = out(("error", "type mismatch\n  \"x\"\nhas type String"))
    assert classify_answer([bad, bad])[0] is None
    assert classify_answer([bad, bad])[1].startswith("ill_typed: type mismatch")
    fine = out(("information", "F_precond 3 : Prop"))
    assert classify_answer([fine, out(("information", "true"))]) == (True, "")
    undecidable = out(("error", "failed to synthesize\n  Decidable (F_precond 3)"))
    assert classify_answer([fine, undecidable]) == (None, "no Decidable instance")
    # a #check that ran out of heartbeats (a long list literal under the probe) is no
    # rejection: the decision elaborated the same term
    spent = out(("error", "(deterministic) timeout at `isDefEq`, maximum number of "
                          "heartbeats (250) has been reached"))
    assert classify_answer([spent, out(("information", "false"))]) == (False, "")
    assert classify_answer([spent, spent]) == (None, "maxHeartbeats")
    synth = out(("error", "failed to synthesize\n  Decidable (F_precond 3)\n(deterministic) "
                          "timeout at `whnf`, maximum number of heartbeats (2000) has been reached"))
    assert classify_answer([fine, synth]) == (None, "maxHeartbeats")


def test_file_sizing_balances_files_and_workers_follow_cores_and_memory() -> None:
    from veriscale.backends.lean.files import balanced_size, default_workers, file_limits

    assert balanced_size(700, 600) == 350 and balanced_size(600, 600) == 600
    assert balanced_size(1201, 600) == 401 and balanced_size(0, 600) == 600
    # at least one file per worker, where each still holds `split` checks
    assert balanced_size(5000, 12000, workers=2, split=1000) == 2500
    assert balanced_size(1500, 12000, workers=2, split=1000) == 1500  # one start is cheaper
    assert balanced_size(9000, 12000, workers=4, split=1000) == 2250
    assert balanced_size(30000, 12000, workers=2, split=1000) == 7500  # the cap, then whole rounds of workers
    assert balanced_size(30000, 12000, workers=1, split=1000) == 10000  # the cap rules
    assert balanced_size(50000, 12000, workers=2, split=1000) == 8334  # 6 files, not 5
    assert default_workers(4000, cpus=2, memory_mb=23000) == 2
    assert default_workers(4000, cpus=8, memory_mb=9000) == 2  # memory-bound
    assert default_workers(4000, cpus=2, memory_mb=1000) == 1
    assert file_limits("wasm").cell_budget > 0 and file_limits("native").cell_budget == 0


def test_kernel_mode_proves_the_precondition_by_decide() -> None:
    from veriscale.backends.lean import render

    task = _task()
    assert render.call_term(task, (3,), True, kernel=True) == "F 3 (by first | decide | sorry)"
    assert render.call_term(task, (3,), True) == "F 3 (by sorry)"
    assert render.postcond_term(task, (3,), 6, kernel=True).endswith("(by first | decide | sorry)")


def test_compatibility_names_are_added_only_when_missing(fake_lean, tmp_path) -> None:
    exe, log = fake_lean
    be = _backend(exe, tmp_path)
    task = _task()
    old = _task("toy_old")
    lean_sections(old).code_aux = "def pad (n : Nat) : Array Int := Array.mkArray n 0"  # type: ignore[union-attr]
    first = be.evaluate_many([("run", (old, None, [(2,)])), ("run", (task, None, [(3,)]))])
    assert [o.value for r in first for o in r] == [4, 6]
    assert _calls(log) == 2  # the old task's unit once more, now with the definition
    assert be.stats.extra["compat"] == {"toy_old": ["Array.mkArray"]}
    work = tmp_path / "work"
    assert not [p for p in work.glob("vs_*") if not p.name.startswith("vs_session_")]
    (again,) = be.run(old, None, [(5,)])
    assert again.value == 10 and _calls(log) == 3  # known now: one file
    (plain,) = be.run(task, None, [(1,)])
    assert plain.value == 2 and "toy_1" not in be.stats.extra["compat"]
    be.close()
    assert not list(work.iterdir())  # files (and a session's own) are removed after use


def test_compat_needed_reads_lean_errors() -> None:
    from veriscale.backends.lean import compat

    assert compat.needed(["Unknown constant `Array.mkArray`"]) == {"Array.mkArray"}
    assert compat.needed(["invalid field 'data', the environment does not contain "
                          "'String.data'\n  s\nhas type\n  String"]) == {"String.data"}
    assert compat.needed(["type mismatch Array.mkArray"]) == set()
    assert compat.needed(["unknown identifier 'foo'"]) == set()
    assert "Array.replicate" in compat.definitions({"Array.mkArray"})
    # Lean 4.28 has only emptyWithCapacity (verina_basic_20 and _27 call the old name)
    assert compat.needed(["Unknown constant `Std.HashSet.empty`"]) == {"Std.HashSet.empty"}
    assert "Std.HashSet.emptyWithCapacity capacity" in compat.definitions({"Std.HashSet.empty"})


def test_stuck_decide_is_asked_of_the_kernel(fake_lean, tmp_path) -> None:
    exe, log = fake_lean
    be = _backend(exe, tmp_path, mode="kernel")
    got = be.precondition_holds(_task(), None, [(1,), (55,), (-3,), (56,)])
    assert got == [Verdict.TRUE, Verdict.TRUE, Verdict.FALSE, Verdict.UNKNOWN]
    assert _calls(log) == 2  # the stuck ones once more, in one file
    assert be.stats.extra["kernel_decide"] == {"asked": 2, "decided": 1, "rounds": 1}
    assert be.precondition_holds(_task(), None, [(2,)]) == [Verdict.TRUE]
    assert _calls(log) == 3  # nothing stuck: no second file


def test_a_proposition_that_panicked_is_asked_of_the_kernel(fake_lean, tmp_path) -> None:
    """Compiled ``decide`` of a precondition that reads ``a[i]!`` out of bounds panics
    and prints ``default``'s answer; Lean's logic still answers it, and the kernel
    does (3131). One the kernel cannot decide either is UNKNOWN, not the
    specification's ERROR (3232). Code that panics is its own failure."""
    exe, log = fake_lean
    be = _backend(exe, tmp_path)
    got = be.precondition_holds(_task(), None, [(1,), (3131,), (-3,), (3232,)])
    assert got == [Verdict.TRUE, Verdict.TRUE, Verdict.FALSE, Verdict.UNKNOWN]
    assert reasons_of(got)[3].startswith("panic: PANIC at F_precond")
    assert be.stats.extra["kernel_decide"] == {"asked": 2, "decided": 1, "rounds": 1}
    assert be.stats.extra["kernel_decide_by_check"] == {
        "decide after a panic": {"asked": 2, "decided": 1}}
    calls = _calls(log)
    assert be.precondition_holds(_task(), None, [(2,)]) == [Verdict.TRUE]
    assert _calls(log) == calls + 1  # nothing panicked: no kernel round
    labels = [c.label for c in be.classify(_task(), [(3131,), (3232,), (-1,)])]
    assert labels == [Label.EXPECTED, Label.UNKNOWN, Label.UNEXPECTED]


def test_stuck_code_test_is_asked_of_the_kernel(fake_lean, tmp_path) -> None:
    exe, log = fake_lean
    be = _backend(exe, tmp_path, mode="kernel")
    got = be.test_outputs(_task(), None, [((3,), 6), ((55,), 110), ((55,), 111)])
    assert [o.value for o in got] == [True, True, False]
    assert _calls(log) == 2  # the stuck ones once more, in one file
    assert be.stats.extra["kernel_decide"] == {"asked": 2, "decided": 2, "rounds": 1}
    assert be.stats.extra["kernel_decide_by_check"] == {"code test": {"asked": 2, "decided": 2}}


def test_stuck_checks_go_to_the_kernel_in_the_heartbeat_ladders_round(fake_lean,
                                                                       tmp_path) -> None:
    """Where a batch climbs the heartbeat ladder, the kernel's questions ride in its
    round: one Lean start fewer than a kernel round of their own."""
    exe, log = fake_lean
    be = _backend(exe, tmp_path, mode="kernel", probe_heartbeats=6250, heartbeat_retries=1)
    got = be.precondition_holds(_task(), None, [(1,), (55,), (4141,), (56,), (-2,)])
    assert got == [Verdict.TRUE, Verdict.TRUE, Verdict.TRUE, Verdict.UNKNOWN, Verdict.FALSE]
    assert _calls(log) == 2  # the probe; then 4141 under 50000 beside 55's and 56's examples
    assert be.stats.extra["kernel_decide"] == {"asked": 2, "decided": 1, "rounds": 0}
    assert be.stats.extra["heartbeat_probe"]["rounds"] == 1
    alone = _backend(exe, tmp_path, mode="kernel", probe_heartbeats=6250, heartbeat_retries=1)
    assert alone.precondition_holds(_task(), None, [(1,), (55,)]) == [Verdict.TRUE] * 2
    assert _calls(log) == 4  # no ladder: the kernel's round of its own
    assert alone.stats.extra["kernel_decide"] == {"asked": 1, "decided": 1, "rounds": 1}


def test_kernel_props_of_stuck_checks() -> None:
    from veriscale.backends.lean import render

    assert render.kernel_prop("#reduce decide (F_precond 1)") == "F_precond 1"
    eq = render.equality_command("F 1 (by first | decide | sorry)", "2", kernel=True)
    assert render.kernel_prop(eq) == f"({eq[len('#reduce '):]}) = true"
    call = render.value_command("F #[1] (by first | decide | sorry)", _bool(), kernel=True)
    assert render.kernel_prop(call, "F") == "(F #[1] (by first | decide | sorry)) = true"
    assert render.kernel_prop(call) is None  # not a Bool call: no proposition answers it
    assert render.kernel_prop("#check (F_precond 1)", "F") is None
    # a compiled decide that panicked: its precondition proof as the kernel needs it
    post = render.decide_command(render.postcond_term(_task(), (1,), 2), kernel=False)
    assert render.panicked_prop(post) == render.postcond_term(_task(), (1,), 2, kernel=True)
    pre = render.decide_command(render.precond_term(_task(), (1,)), kernel=False)
    assert render.panicked_prop(pre) == "F_precond 1"
    assert render.panicked_prop("#eval! (F 1 (by sorry))") is None  # code: never asked


def _bool():  # type: ignore[no-untyped-def]
    from veriscale.values import parse_type

    return parse_type("Bool")


def test_pack_fills_files_across_units(tmp_path) -> None:
    from veriscale.backends.lean import render

    be = _backend(Path("/nonexistent/lean"), tmp_path, chunk_size=2400, workers=2)
    variants = [render.Variant(_task(f"toy_{i}")) for i in range(5)]
    checks = [[(i, k, "#check (Nat.zero)") for k in range(1504)] for i in range(5)]
    files = be._pack(variants, checks)
    sizes = [sum(len(items) for _, items in f) for f in files]
    assert len(files) == 4 and sizes == [1880, 1880, 1880, 1880]  # ceil(7520 / 2400) files
    assert [c for f in files for _, items in f for c in items] == [c for u in checks for c in u]


def test_verify_compares_the_reference_in_lean(fake_lean, tmp_path) -> None:
    """``verify`` asks the Lean backend VERINA's code test (``==`` in Lean), so a stuck
    value still reaches the kernel round; a wrong expected output disagrees."""
    from veriscale.evaluation.verify import KINDS, verify_tasks

    exe, _ = fake_lean
    be = _backend(exe, tmp_path, mode="kernel")
    task = _task()
    task.tests = [ExpectedPair((3,), 6, []), ExpectedPair((55,), 110, []),
                  ExpectedPair((4,), 9, [])]
    report = verify_tasks(be, [task])
    assert report.checks[KINDS[4]].to_json() == {"agree": 2, "disagree": 1, "unknown": 0}


def test_heartbeat_probe_retries_a_few_checks_under_the_full_budget(fake_lean, tmp_path) -> None:
    """Checks first run under a small heartbeat budget; those that exceed it run again
    under the full one, at most ``heartbeat_retries`` per unit, so a specification that
    enumerates up to a huge input costs a few full budgets, not one per input."""
    exe, log = fake_lean
    inputs = [(1,), (4242,), (4343,), (-2,), (4343,), (4343,)]
    be = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=50000, heartbeat_retries=2)
    got = be.precondition_holds(_task(), None, inputs)
    # 4242 fits the full budget only, 4343 no budget: as a retried 4343 did not fit
    # it, the other two are not retried
    assert got == [Verdict.TRUE, Verdict.TRUE, Verdict.UNKNOWN, Verdict.FALSE,
                   Verdict.UNKNOWN, Verdict.UNKNOWN]
    assert _calls(log) == 2
    assert be.stats.extra["heartbeat_probe"] == {"exceeded": 4, "retried": 2,
                                                 "decided_on_retry": 1, "rounds": 1}
    (c,) = be.classify(_task(), [(4343,)])
    assert c.label == Label.UNKNOWN and "maxHeartbeats" in c.detail
    one_round = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=0)
    assert one_round.precondition_holds(_task(), None, inputs) == [
        Verdict.TRUE, Verdict.TRUE, Verdict.UNKNOWN, Verdict.FALSE, Verdict.UNKNOWN,
        Verdict.UNKNOWN]
    assert one_round.stats.processes == 1 and "heartbeat_probe" not in one_round.stats.extra
    # every retried check fit the full budget: the unit's other ones get a last round
    be = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=50000, heartbeat_retries=1)
    assert be.precondition_holds(_task(), None, [(4242,), (4244,), (2,)]) == [Verdict.TRUE] * 3
    assert be.stats.processes == 3
    assert be.stats.extra["heartbeat_probe"] == {"exceeded": 2, "retried": 2,
                                                 "decided_on_retry": 2, "rounds": 2}


def test_heartbeat_probe_climbs_budgets_with_scouts(fake_lean, tmp_path) -> None:
    """Budgets grow by ``heartbeat_step``: a unit's smallest exceeding check scouts
    the next budget, and the others follow only under a budget a scout fit."""
    exe, log = fake_lean
    be = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=6250, heartbeat_retries=1)
    assert be._heartbeat_levels() == [6250, 50000, 400000]
    inputs = [(1,), (4141,), (4242,), (4343,), (4141,)]
    got = be.precondition_holds(_task(), None, inputs)
    assert got == [Verdict.TRUE, Verdict.TRUE, Verdict.TRUE, Verdict.UNKNOWN, Verdict.TRUE]
    # probe; 4141 scouts 50000; the rest under it; 4242 scouts 400000; 4343 under it
    assert _calls(log) == 5
    assert be.stats.extra["heartbeat_probe"] == {"exceeded": 4, "retried": 6,
                                                 "decided_on_retry": 3, "rounds": 4}
    steps = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=1000, heartbeat_step=10)
    assert steps._heartbeat_levels() == [1000, 10000, 100000, 400000]


def test_checks_that_cost_less_than_a_lean_start_go_with_their_scouts(fake_lean, tmp_path) -> None:
    """Where a Lean start costs more than a unit's waiting checks would if all of them
    ran out of the next budget (WASM: 30 s against 0.4 ms per heartbeat), they go with
    the scouts instead of a round later; the answers are the same, in fewer rounds."""
    from dataclasses import replace

    exe, _ = fake_lean
    inputs = [(1,), (4141,), (4141,), (4141,), (4242,)]
    want = [Verdict.TRUE] * 5
    scouting = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=6250, heartbeat_retries=1)
    assert scouting.precondition_holds(_task(), None, inputs) == want
    # 4141 scouts 50000; the rest under it; 4242 scouts 400000
    assert scouting.stats.processes == 4
    assert scouting.stats.extra["heartbeat_probe"] == {"exceeded": 4, "retried": 5,
                                                       "decided_on_retry": 4, "rounds": 3}
    cheap = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=6250, heartbeat_retries=1)
    # 3 checks beyond the scout × 50000 heartbeats × 0.001 ms = 0.15 s, under 1 s
    cheap.file_limits = replace(cheap.file_limits, start_seconds=1.0, heartbeat_ms=0.001)
    assert cheap.precondition_holds(_task(), None, inputs) == want
    assert cheap.stats.processes == 3  # all four under 50000; 4242 scouts 400000
    # retried counts commands: the scout tried 2 budgets, then 3 others, then 4242 once
    assert cheap.stats.extra["heartbeat_probe"] == {"exceeded": 4, "retried": 6,
                                                    "decided_on_retry": 4, "rounds": 2}
    dear = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=6250, heartbeat_retries=1, workers=1)
    dear.file_limits = replace(dear.file_limits, start_seconds=0.1, heartbeat_ms=0.001)
    assert dear.precondition_holds(_task(), None, inputs) == want
    assert dear.stats.processes == 4  # 0.15 s of stuck checks is more than a start
    # On two workers the round is spread over both, so 0.15 s of stuck checks would
    # lengthen it by 0.075 s, less than a start: they go with the scout after all.
    wide = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=6250, heartbeat_retries=1, workers=2)
    wide.file_limits = replace(wide.file_limits, start_seconds=0.1, heartbeat_ms=0.001)
    assert wide.precondition_holds(_task(), None, inputs) == want
    assert wide.stats.processes == 4  # probe; the scout (2 budgets) and the others in 2 files;
    assert wide.stats.extra["heartbeat_probe"]["rounds"] == 2  # 4242 then scouts 400000
    # ... where three workers' worth would not: the others wait for the scout
    narrow = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=6250, heartbeat_retries=1, workers=2)
    narrow.file_limits = replace(narrow.file_limits, start_seconds=0.07, heartbeat_ms=0.001)
    assert narrow.precondition_holds(_task(), None, inputs) == want
    assert narrow.stats.extra["heartbeat_probe"]["rounds"] == 3


def test_scouts_try_every_budget_in_one_round_where_a_lean_start_is_dear(fake_lean, tmp_path) -> None:
    """A check that fits no budget (4343) costs one round of scouts on WASM, not one
    round per budget; on a runner with cheap starts (native) it climbs one at a time."""
    from dataclasses import replace

    exe, _ = fake_lean
    inputs = [(1,), (4343,), (4343,)]
    want = [Verdict.TRUE, Verdict.UNKNOWN, Verdict.UNKNOWN]
    climbing = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=6250, heartbeat_retries=1, workers=1)
    assert climbing.precondition_holds(_task(), None, inputs) == want
    assert climbing.stats.extra["heartbeat_probe"]["rounds"] == 2  # 50000, then 400000
    dear = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=6250, heartbeat_retries=1, workers=1)
    dear.file_limits = replace(dear.file_limits, start_seconds=300.0, heartbeat_ms=0.4)
    assert dear.precondition_holds(_task(), None, inputs) == want
    assert dear.stats.processes == 2
    assert dear.stats.extra["heartbeat_probe"] == {"exceeded": 2, "retried": 3,
                                                   "decided_on_retry": 0, "rounds": 1}
    (c,) = dear.classify(_task(), [(4343,)])
    assert c.label == Label.UNKNOWN and "maxHeartbeats" in c.detail


def test_the_probe_prefix_does_not_change_a_checks_kind() -> None:
    from veriscale.backends.lean.messages import command_kind
    from veriscale.backends.lean.render import probed

    for cmd in ("#reduce decide (F_precond 3)", "#eval! (F 4 (by sorry))", "example : (F 1) := by decide +kernel"):
        assert command_kind(probed(cmd, 50000)) == command_kind(cmd) != "set_option"


def test_a_file_larger_than_the_timeout_was_sized_for_gets_longer(tmp_path) -> None:
    """WASM's timeout is sized for files of 2,400 checks; larger files (up to 12,000,
    since node's stacks were raised) get it in proportion, smaller ones as it is."""
    from dataclasses import replace

    from veriscale.backends.lean.files import file_limits

    be = _backend(Path("/nonexistent/lean"), tmp_path, timeout=100)
    assert be._file_timeout(5000) is None  # native: every file gets the runner's timeout
    be.file_limits = replace(file_limits("wasm"))
    assert be.file_limits.timeout_checks == 2400 and be.file_limits.checks >= 12000
    assert be._file_timeout(2400) is None and be._file_timeout(100) is None
    assert be._file_timeout(4800) == 200.0 and be._file_timeout(12000) == 500.0


def test_progress_hears_of_checks_while_lean_runs(fake_lean, tmp_path) -> None:
    """Lean reports each command as it finishes; a display hears of the checks a
    running file has got past, not only of finished files (a WASM file of thousands
    of checks runs for many minutes)."""
    exe, log = fake_lean
    be = _backend(exe, tmp_path, batch_size=1)
    events: list[tuple[str, int, int]] = []

    def hook(event: str, files: int, checks: int) -> None:
        events.append((event, files, checks))
        if event == "checks":
            Path(str(log) + ".go").touch()

    be.progress = hook
    got = be.precondition_holds(_task(), None, [(1,), (2,), (88,), (3,)])
    assert got == [Verdict.TRUE] * 4  # 88 saw the display hear of 1 and 2 first
    kinds = [e for e, _, _ in events]
    assert kinds[0] == "planned" and kinds[-1] == "done" and "checks" in kinds
    assert sum(c for e, _, c in events if e != "planned") == events[0][2] == 4
    assert sum(f for e, f, _ in events if e != "planned") == events[0][1] == 1


def test_a_retried_file_never_counts_a_check_twice(fake_lean, tmp_path) -> None:
    exe, _ = fake_lean
    be = _backend(exe, tmp_path)
    events: list[tuple[str, int, int]] = []
    be.progress = lambda e, f, c: events.append((e, f, c))
    be.precondition_holds(_task(), None, [(1,), (77,), (2,), (3,)])  # Lean dies at 77
    planned = sum(c for e, _, c in events if e == "planned")
    assert sum(c for e, _, c in events if e != "planned") == planned
    assert all(c > 0 for e, _, c in events if e == "checks")


def test_the_oracle_cache_keeps_answers_before_the_batch_returns(fake_lean, tmp_path) -> None:
    """A stage of a WASM Lean run is one batch of up to an hour: each finished file's
    conclusive answers are in the cache at once, so a run killed mid-stage keeps them."""
    import sqlite3
    import threading

    from veriscale.backends.cache import OracleCache, with_cache

    exe, log = fake_lean
    cache = OracleCache(tmp_path / "oracle.sqlite")
    be = with_cache(_backend(exe, tmp_path, chunk_size=1), cache)
    stop = threading.Event()

    def watch() -> None:  # another process's view: rows in the SQLite file
        while not stop.is_set():
            with sqlite3.connect(tmp_path / "oracle.sqlite") as db:
                if db.execute("SELECT count(*) FROM oracle").fetchone()[0] >= 1:
                    Path(str(log) + ".go").touch()
                    return
            stop.wait(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        got = be.precondition_holds(_task(), None, [(1,), (88,)])
    finally:
        stop.set()
        watcher.join()
    assert got == [Verdict.TRUE, Verdict.TRUE]  # 88 ran after 1's answer was stored
    again = with_cache(_backend(exe, tmp_path), OracleCache(tmp_path / "oracle.sqlite"))
    assert again.precondition_holds(_task(), None, [(1,), (88,)]) == got
    assert again.cache.hits == 2 and again.inner.stats.processes == 0


def test_answers_are_told_as_the_round_that_settles_them_ends(fake_lean, tmp_path) -> None:
    exe, _ = fake_lean
    be = _backend(exe, tmp_path, probe_heartbeats=2000)
    batches: list[list[tuple[tuple, int, object]]] = []
    be.on_answers = batches.append
    task = _task()
    args = (task, None, [(1,), (4141,), (-2,)])  # 4141 exceeds the probe: the ladder decides it
    (got,) = be.evaluate_many([("precondition_holds", args)])
    assert got == [Verdict.TRUE, Verdict.TRUE, Verdict.FALSE]
    assert be.stats.extra["heartbeat_probe"]["decided_on_retry"] == 1
    # the probe round's file, then the ladder's round: 4141 only once it fit a budget
    assert [[(i, v) for a, i, v in b if a is args] for b in batches] == [
        [(0, Verdict.TRUE), (2, Verdict.FALSE)], [(1, Verdict.TRUE)]]
    kernel = _backend(exe, tmp_path, mode="kernel")
    batches.clear()
    kernel.on_answers = batches.append
    args = (task, None, [(1,), (55,), (56,)])  # 55 and 56 stuck in #reduce; the kernel decides 55
    (got,) = kernel.evaluate_many([("precondition_holds", args)])
    assert got == [Verdict.TRUE, Verdict.TRUE, Verdict.UNKNOWN]
    told_as = [[(i, v) for a, i, v in b if a is args] for b in batches]
    assert told_as[-1] == [(1, Verdict.TRUE)]  # the kernel round's answer, told again
    assert told_as[0][0] == (0, Verdict.TRUE)
    told: list[tuple[tuple, int, object]] = []
    be.on_answers = told.extend
    cl = (task, [(1,), (13,)])  # classification: both commands of an input, told as one
    (labels,) = be.evaluate_many([("classify", cl)])
    assert sorted(i for a, i, _ in told if a is cl) == [0, 1]
    # a conclusive answer told early is the final one; an UNKNOWN may still change
    # (here: the Plausible stage's note is added to it)
    assert [(i, v) for a, i, v in told if a is cl and v.label is not Label.UNKNOWN] == [
        (0, labels[0])]
    assert labels[1].label is Label.UNKNOWN and "plausible" in labels[1].detail


def test_unknown_verdicts_are_counted_by_cause(fake_lean, tmp_path) -> None:
    """A Verdict carries no reason: the backend counts why each UNKNOWN is one, by
    ground truth or candidate spec, so that a run's stages can report causes."""
    exe, _ = fake_lean
    be = _backend(exe, tmp_path)
    assert be.precondition_holds(_task(), None, [(1,), (13,), (13,)]) == [
        Verdict.TRUE, Verdict.UNKNOWN, Verdict.UNKNOWN]
    assert be.stats.unknowns == {"gt precondition: no Decidable instance": 2}
    kernel = _backend(exe, tmp_path, mode="kernel")
    assert kernel.precondition_holds(_task(), None, [(56,), (55,)]) == [Verdict.UNKNOWN,
                                                                        Verdict.TRUE]
    spec = Spec(precond="  x > 0", postcond="  result = 2 * x")
    kernel.evaluate_many([("precondition_holds", (_task(), spec, [(56,)]))])
    assert kernel.stats.unknowns == {"gt precondition: stuck reduction": 1,
                                     "spec precondition: stuck reduction": 1}


def test_batches_give_the_answers_of_single_checks(fake_lean, tmp_path) -> None:
    """Compiled mode asks a unit's checks of one function in one ``#eval!`` of a list;
    a term that fails to elaborate (13: no ``Decidable`` instance) keeps its own error
    and the others are asked again, so every answer is what a single check gives."""
    exe, log = fake_lean
    task = _task()
    requests = [
        ("precondition_holds", (task, None, [(1,), (-2,), (13,), (5,)])),
        ("postcondition_holds", (task, None, [((3,), 6), ((3,), 5), ((1,), 2)])),
        ("run", (task, None, [(4,), (-5,)])),
    ]
    single = _backend(exe, tmp_path, batch_size=1, probe_heartbeats=0).evaluate_many(requests)
    assert single[0][2] == Verdict.UNKNOWN
    before = _calls(log)
    batched = _backend(exe, tmp_path, probe_heartbeats=0)
    assert batched.evaluate_many(requests) == single
    # the precondition batch failed on 13 alone: its three others went again, batched
    assert _calls(log) - before == 2 and batched.stats.extra.get("unbatched", 0) == 0
    clean = _backend(exe, tmp_path, probe_heartbeats=0, keep_files=True)
    requests[0] = ("precondition_holds", (task, None, [(1,), (-2,), (5,)]))
    before = _calls(log)
    clean.evaluate_many(requests)
    text = "\n".join(f.read_text() for f in (tmp_path / "work").glob("*.lean"))
    assert _calls(log) - before == 1 and text.count("#eval! [") == 3


def test_a_helper_that_does_not_elaborate_leaves_its_batch_term_by_term(fake_lean,
                                                                        tmp_path) -> None:
    """A batch goes through one helper definition; where Lean cannot elaborate it (no
    instance over free variables) the same checks are asked again as a batch of terms,
    and every answer is still what a single check gives."""
    exe, log = fake_lean
    sig = Signature.from_json({"name": "F", "parameters": [{"param_name": "NO_INSTANCE",
                                                           "param_type": "Int"}],
                               "return_type": "Int"})
    task = replace(_task(), signature=sig)
    pairs = [((3,), 6), ((3,), 5), ((1,), 2)]
    single = _backend(exe, tmp_path, batch_size=1).postcondition_holds(task, None, pairs)
    assert single == [Verdict.TRUE, Verdict.FALSE, Verdict.TRUE]
    be = _backend(exe, tmp_path)
    before = _calls(log)
    assert be.postcondition_holds(task, None, pairs) == single
    assert _calls(log) - before == 2 and be.stats.extra["rebatched"] == 3
    before = _calls(log)  # the unit's kind of check now goes term by term at once
    assert be.postcondition_holds(task, None, pairs[::-1]) == single[::-1]
    assert _calls(log) - before == 1
    no_helpers = _backend(exe, tmp_path, helpers=False)
    before = _calls(log)
    assert no_helpers.postcondition_holds(task, None, pairs) == single
    assert _calls(log) - before == 1


def test_values_as_data_give_the_answers_of_literals(fake_lean, tmp_path) -> None:
    """Where the runner has Lean's JSON, a batch's values go as one string the file's own
    decoder reads; the answers are those of literal batches, and a batch whose decoding
    failed is asked again with literals (no check is lost or changed)."""
    exe, log = fake_lean
    task = _task()
    inputs = [(x,) for x in (1, 2, -3, 4, 0, 5)]
    pairs = [((3,), 6), ((3,), 5), ((-2,), -4)]

    def ask(data: bool, xs):
        be = _backend(exe, tmp_path, data=data, imports=("Lean",))
        got = be.evaluate_many([("classify", (task, xs)), ("postcondition_holds",
                                (task, None, pairs)), ("run", (task, None, xs))])
        return [[str(a) for a in row] for row in got], be

    literal, be = ask(False, inputs)
    assert not be.data
    assert not _backend(exe, tmp_path).data  # a runner without Lean's JSON: literals
    assert not _backend(exe, tmp_path, imports=("Lean",), mode="kernel").data
    before = _calls(log)
    data, be = ask(True, inputs)
    assert be.data and data == literal and _calls(log) == before + 1
    assert be.stats.extra.get("rebatched", 0) == 0
    failing = [*inputs, (4545,)]
    literal, _ = ask(False, failing)
    before = _calls(log)
    data, be = ask(True, failing)
    assert data == literal and data[0][-1].startswith("Classification(label=<Label.EXPECTED")
    assert _calls(log) == before + 2  # the batches with 4545 again, as literals
    assert be.stats.extra["rebatched"] > 0


@given(st.lists(st.lists(st.text(min_size=1, max_size=30), max_size=12), min_size=1, max_size=6))
def test_tiers_keep_every_check_once_and_put_the_longest_last(units: list[list[str]]) -> None:
    """Every unit's short checks, then every unit's longest (a unit again, in order)."""
    from veriscale.backends.lean.files import tiers

    variants = [f"v{i}" for i in range(len(units))]
    checks = [sorted(((i, k, c) for k, c in enumerate(cs)), key=lambda it: len(it[2]))
              for i, cs in enumerate(units)]
    out_v, out_c = tiers(variants, checks)  # type: ignore[arg-type]
    assert sorted(it for items in out_c for it in items) == sorted(
        it for items in checks for it in items)
    assert all(not items or (out_v[j] == f"v{items[0][0]}"
                             and all(it[0] == items[0][0] for it in items))
               for j, items in enumerate(out_c))
    # two runs of units in order; no check of the first longer than one of the second
    index = [int(v[1:]) for v in out_v]
    k = next((j for j in range(1, len(index)) if index[j] <= index[j - 1]), len(index))
    assert all(a < b for a, b in zip(index[k:], index[k + 1:], strict=False))
    first = [len(it[2]) for items in out_c[:k] for it in items]
    second = [len(it[2]) for items in out_c[k:] for it in items]
    assert not first or not second or max(first) <= min(second)


def test_a_session_serves_many_files_and_a_stop_ends_it(fake_lean, tmp_path) -> None:
    """One Lean start serves every file of a base; a file that stops Lean ends its
    session (its answers as a stopped file's), and the next file starts another."""
    if not _SESSIONS[0]:
        pytest.skip("Lean sessions only")
    exe, log = fake_lean
    starts = log.with_name(log.name + ".starts")
    be = _backend(exe, tmp_path, batch_size=1, kernel_fallback=False, chunk_size=2, workers=1)
    got = be.precondition_holds(_task(), None, [(1,), (2,), (3,), (4,), (-5,), (6,)])
    assert got == [Verdict.TRUE] * 4 + [Verdict.FALSE, Verdict.TRUE]
    assert _calls(log) == 3 and len(starts.read_text().splitlines()) == 1
    got = be.precondition_holds(_task("toy_b"), None, [(1,), (77,)])
    assert got[0] == Verdict.TRUE and got[1] == Verdict.UNKNOWN
    assert "infrastructure: Lean stopped" in got.reasons[1]
    assert len(starts.read_text().splitlines()) == 1 and be.runner.session_starts() == 1
    assert be.precondition_holds(_task("toy_c"), None, [(3,)]) == [Verdict.TRUE]
    assert len(starts.read_text().splitlines()) == 2  # the crash ended the first session
    assert be.stats.extra["crashes"] == 1 and be.stats.extra["session_starts"] == 2
    assert be.stats.extra["served_files"] == be.stats.processes == 5
    # the kernel fallback's files are served too, and its sessions counted: every Lean
    # process the fake saw started is a session
    # (two kernel rounds, as in test_the_kernel_is_asked_a_sample_before_the_rest)
    be = _backend(exe, tmp_path, batch_size=1, crash_retries=0, workers=1)
    got = be.precondition_holds(_task("toy_d"), None, [(77,)] * 6 + [(57,)] * 6)
    assert got == [Verdict.TRUE] * 6 + [Verdict.UNKNOWN] * 6
    assert be.stats.extra["kernel_fallback"]["files"] >= 2
    # one Lean of each kind at a time: no kernel session idles once its rounds are done
    assert be._kernel_backend is not None and be._kernel_backend.runner._pool is None
    assert prover_processes(be.stats.processes, be.stats.extra) \
        == len(starts.read_text().splitlines()) - 2
