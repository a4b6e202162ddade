"""Where a Coq check's time goes: the harness around it, or the evaluation itself.

    python benchmarks/bench_coq_check_cost.py RUN_DIR [--tasks N] [--inputs K]

``RUN_DIR`` is a ``veriscale run DATASET --backend coq`` directory. The
unexpected stage's (expected input, adversary) cells of the first ``N`` tasks
with adversaries (``K`` expected inputs each, as ``bench_coq_shared_literals.py``
picks them) are rendered into ``coqc`` files by the backend itself. Each file
then runs three ways, alternating, one ``coqc`` at a time, measuring its user
CPU: as rendered (each check a tactic sentence in a proof, under its own
``timeout`` and the unit's strike budget); stripped to bare top-level
``Eval vm_compute`` commands (no limits: only a lower bound for what any
harness costs); and with ``Time`` on every check, for the distribution of
per-check seconds. Prints the harness's share of the CPU, the checks' own share
(the rest is coqc's start, libraries, literals and contexts), and how the
checks' time is spread (most of it, on VERINA, is a few large inputs).
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import tempfile
from pathlib import Path

from bench_coq_shared_literals import cells  # type: ignore[import-not-found]

import veriscale.backends.coq.running as coq_running
from veriscale.backends.coq.backend import CoqBackend

CHECK = re.compile(r'^idtac "(\w+)"; \w+_run constr:\((.*)\)\.$')


def rendered_files(jobs: list[tuple]) -> list[str]:
    """The sources the backend gives ``coqc`` for ``jobs`` (run once, for real)."""
    sources: list[str] = []
    real = coq_running.spawn_coqc

    def keep(coqc: str, source: str, **limits: object) -> object:
        sources.append(source)
        return real(coqc, source, **limits)  # type: ignore[arg-type]

    coq_running.spawn_coqc = keep  # type: ignore[assignment]
    try:
        backend = CoqBackend()
        backend.run_many(jobs)
        backend.close()
    finally:
        coq_running.spawn_coqc = real
    return sources


def bare(source: str) -> str:
    """The same checks as top-level ``Eval vm_compute``, outside any proof."""
    out = []
    for line in source.splitlines():
        m = CHECK.match(line)
        if m:
            out.append(f"Eval vm_compute in ({m.group(2)}).")
        elif line not in ("Goal True.", "Abort.") and not line.startswith("assert "):
            out.append(line)
    return "\n".join(out) + "\n"


def timed(source: str) -> str:
    return "\n".join(f"Time {line}" if CHECK.match(line) else line
                     for line in source.splitlines()) + "\n"


def cpu(source: str, folder: Path) -> tuple[float, str]:
    """User CPU seconds of one ``coqc`` on ``source``, and what it printed."""
    path = folder / "Check.v"
    path.write_text(source, encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    proc = subprocess.run(["coqc", "-q", "-w", "-all", path.name], cwd=folder,
                          capture_output=True, text=True)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--inputs", type=int, default=200)
    args = ap.parse_args()
    sources = rendered_files(cells(args.run, args.tasks, args.inputs))
    checks = sum(1 for s in sources for line in s.splitlines() if CHECK.match(line))
    as_rendered = stripped = 0.0
    per_check: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-coq-cost-") as tmp:
        for source in sources:
            for _ in range(2):  # alternating, so load on the machine falls on both
                as_rendered += cpu(source, Path(tmp))[0] / 2
                stripped += cpu(bare(source), Path(tmp))[0] / 2
            out = cpu(timed(source), Path(tmp))[1]
            per_check += [float(x) for x in re.findall(r"Finished transaction in ([\d.]+) secs",
                                                       out)]
    per_check.sort(reverse=True)
    print(f"{len(sources)} coqc files, {checks} checks of {args.tasks} tasks' cells")
    print(f"user CPU as rendered {as_rendered:.2f} s, bare Eval {stripped:.2f} s: the harness "
          f"(proof, timeout, strike budget, markers) is {1 - stripped / as_rendered:.0%} of it")
    total = sum(per_check) or 1.0
    top = per_check[: max(1, len(per_check) // 10)]
    print(f"the checks' own time (Time on each): {total:.2f} s; the rest of the CPU "
          f"({max(0.0, as_rendered - total):.2f} s) starts coqc, loads libraries and "
          f"elaborates literals and contexts")
    print(f"checks timed: {len(per_check)}; the slowest tenth takes {sum(top) / total:.0%} "
          f"of their time, the slowest check {per_check[0] if per_check else 0:.3f} s")
    for lo, hi in ((0, 0.001), (0.001, 0.005), (0.005, 0.02), (0.02, 0.1), (0.1, float("inf"))):
        got = [t for t in per_check if lo <= t < hi]
        print(f"  {lo * 1000:>5.0f}-{hi * 1000:<5.0f} ms: {len(got):6d} checks, "
              f"{sum(got):7.2f} s ({sum(got) / total:.0%})")


if __name__ == "__main__":
    main()
