"""What a WASM Lean file costs to start, through the package's ``lean.js`` and through
VeriScale's launcher (``wasm_setup.LAUNCHER_NAME``), in one run; and whether the two
give the same Lean messages.

Runs each file once with each script, one after the other (not at once: the
machine has two cores and Lean uses more than one thread), and prints both wall
times and their ratio. With no file it writes a small one (two checks), which
measures the start itself; pass kept Lean files (``backend_options.keep_files``)
to compare whole oracle rounds::

    python3 benchmarks/bench_lean_start.py
    python3 benchmarks/bench_lean_start.py /tmp/kept/vs_*_10.lean
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from veriscale.backends.lean.process import run_command
from veriscale.backends.lean.runner import WasmRunner

SMALL = "example : 1 + 1 = 2 := by decide\n#reduce decide ([1, 2, 3].all (fun x => x < 5))\n"


def run(runner: WasmRunner, script: Path, file: Path) -> tuple[float, list[str]]:
    """The runner's own command for ``file``, with ``script`` in place of the launcher."""
    cmd, cwd, env = runner.command(file)
    cmd[cmd.index(str(runner.install().launcher))] = str(script)
    start = time.perf_counter()
    res = run_command(cmd, cwd=cwd, env=env, timeout=7200, stack_mb=runner.stack_mb)
    seconds = time.perf_counter() - start
    if res.returncode != 0 and not res.messages:
        raise SystemExit(f"{script.name} on {file}: exit {res.returncode}\n{res.stderr[-2000:]}")
    return seconds, [json.dumps([m.severity, m.line, m.column, m.text]) for m in res.messages]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    runner = WasmRunner()
    inst = runner.install()
    if inst.launcher == inst.lean_js:
        raise SystemExit(f"no launcher in {inst.lean_js.parent}: this lean.js cannot be patched")
    tmp = Path(tempfile.mkdtemp(prefix="veriscale-start-", dir="/tmp"))
    files = args.files
    if not files:
        files = [tmp / "start.lean"]
        files[0].write_text(SMALL)
    print(f"{'file':<28} {'lean.js s':>10} {'launcher s':>11} {'ratio':>6}  same messages")
    for f in files:
        local = tmp / Path(f).name
        if local != f:
            local.write_text(Path(f).read_text())
        slow, slow_msgs = run(runner, inst.lean_js, local)
        fast, fast_msgs = run(runner, inst.launcher, local)
        same = "yes" if slow_msgs == fast_msgs else f"NO ({len(slow_msgs)} vs {len(fast_msgs)})"
        print(f"{Path(f).name:<28} {slow:>10.1f} {fast:>11.1f} {slow / fast:>6.1f}  "
              f"{same} ({len(fast_msgs)} messages)")


if __name__ == "__main__":
    main()
