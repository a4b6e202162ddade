"""What one long-lived WASM Lean process costs per file, against a Lean start per file.

A WASM Lean file pays about 20 CPU seconds (and 3.4 GB) before its first check: the
start of ``lean.wasm`` itself (about 16 CPU s with ``Init`` alone), the imports of
``Lean`` and ``Std``, and the compiled-evaluation prelude. In the 189-task VERINA run
that start was half of the classify stage's Lean CPU (432 of 870 s over 21 files),
and every crash or time-out pays it again.

This script measures the alternative: the file's own last command (``run_cmd``, the
tool's text, never a candidate's) loops, reading *chunks* of Lean text from a file in
the work directory and elaborating each from the same base environment (the one after
the imports and the prelude: nothing a chunk declares outlives it), writing each
chunk's messages and an end marker to another file. (Output through ``IO.println``
inside a command is captured by Lean until the command ends, hence files.)

Each chunk here is one unit as the backend writes them: a definition and a batch of
64 compiled checks of it. Every answer is compared with Python's. Prints the start,
the mean cost of a chunk, the resident memory first and last (a leak would show), and
what the same chunks would cost as one file each::

    python3 benchmarks/bench_lean_session.py --chunks 200
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

from veriscale.backends.lean import compiled_eval
from veriscale.backends.lean.process import tree_cpu_seconds
from veriscale.backends.lean.runner import WasmRunner

LOOP = """
open Lean Elab Command Frontend in
partial def vsSessionRead (src : IO.FS.Stream) (acc : String) : IO (Option String) := do
  let line ← src.getLine
  if line.isEmpty then
    IO.sleep 5
    return ← vsSessionRead src acc
  if line.startsWith "--VS-QUIT" then return none
  if line.startsWith "--VS-END" then return some acc
  vsSessionRead src (acc ++ line)

open Lean Elab Command Frontend in
partial def vsSessionLoop (src : IO.FS.Stream) (out : IO.FS.Handle) (env0 : Environment)
    (opts : Options) (n : Nat) : IO Unit := do
  match ← vsSessionRead src "" with
  | none => out.putStrLn s!"--VS-BYE {n}"; out.flush
  | some text =>
    let s ← IO.processCommands (Parser.mkInputContext text "<chunk>") {}
      (Command.mkState env0 {} opts)
    for m in s.commandState.messages.toList do
      out.putStr (← m.toString)
    out.putStrLn s!"--VS-DONE {n}"
    out.flush
    vsSessionLoop src out env0 opts (n + 1)

open Lean Elab Command in
run_cmd do
  let env ← getEnv
  let opts ← getOptions
  let src := IO.FS.Stream.ofHandle (← IO.FS.Handle.mk "IN" .read)
  let out ← IO.FS.Handle.mk "OUT" .append
  out.putStrLn "--VS-READY"
  out.flush
  (vsSessionLoop src out env opts 0 : IO Unit)
"""


def header() -> str:
    imports = "\n".join(f"import {m}" for m in compiled_eval.IMPORTS)
    return (f"{imports}\nset_option maxHeartbeats 400000\nset_option eval.pp false\n\n"
            f"{compiled_eval.prelude()}\n")


def chunk(i: int) -> tuple[str, list[int]]:
    xs = [(i * 64 + k) % 50 for k in range(64)]
    text = (f"def g (xs : List Nat) : Nat := xs.foldl (· + ·) 0 + {i}\n"
            f"#eval! ([{', '.join(map(str, xs))}].map fun x => g (List.range x))\n")
    return text, [sum(range(x)) + i for x in xs]


def rss_mb(pid: int) -> int:
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(k) for k in (task / "children").read_text().split())
        except OSError:
            continue
    return total // 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=100)
    args = ap.parse_args()
    runner = WasmRunner()
    work = Path(runner.work_dir())
    src, out = work / "session-in.txt", work / "session-out.txt"
    src.write_text("")
    out.write_text("")
    file = work / "vs_session.lean"
    file.write_text(header() + LOOP.replace('"IN"', f'"{src}"').replace('"OUT"', f'"{out}"'))
    cmd, cwd, env = runner.command(file)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    reader = out.open()

    def until(marker: str, limit: float = 900.0) -> list[str]:
        got: list[str] = []
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            line = reader.readline()
            if not line:
                if proc.poll() is not None:
                    raise SystemExit(f"Lean stopped (exit {proc.returncode}) before {marker}")
                time.sleep(0.005)
                continue
            if line.startswith(marker):
                return got
            got.append(line)
        raise SystemExit(f"no {marker} within {limit} s")

    try:
        until("--VS-READY")
        start_wall, start_cpu, first_rss = time.monotonic() - t0, tree_cpu_seconds(proc.pid), \
            rss_mb(proc.pid)
        print(f"start: {start_wall:.1f} s wall, {start_cpu:.1f} CPU s, {first_rss} MB")
        cpu0, wall0, wrong = tree_cpu_seconds(proc.pid), time.monotonic(), 0
        with src.open("a") as feed:
            for i in range(args.chunks):
                text, want = chunk(i)
                feed.write(text + "--VS-END\n")
                feed.flush()
                # a message's text wraps at Lean's default width: compare without spaces
                got = "".join("".join(until("--VS-DONE")).split())
                if got != str(want).replace(" ", ""):
                    wrong += 1
                    if wrong == 1:
                        print(f"chunk {i}: Lean said {got[:200]!r}, Python {str(want)[:200]!r}")
            feed.write("--VS-QUIT\n")
        per_cpu = (tree_cpu_seconds(proc.pid) - cpu0) / args.chunks
        per_wall = (time.monotonic() - wall0) / args.chunks
        print(f"{args.chunks} chunks (a definition and 64 compiled checks each): "
              f"{per_wall:.3f} s wall, {per_cpu:.3f} CPU s a chunk; answers wrong: {wrong}")
        print(f"resident memory: {first_rss} MB after the start, {rss_mb(proc.pid)} MB at the end")
        print(f"as one file each: about {args.chunks * (start_cpu + per_cpu):.0f} CPU s; "
              f"in one session: {start_cpu + args.chunks * per_cpu:.0f} CPU s "
              f"(x{(start_cpu + per_cpu) / (per_cpu + start_cpu / args.chunks):.0f})")
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()


if __name__ == "__main__":
    main()
