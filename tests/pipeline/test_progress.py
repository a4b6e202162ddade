"""What a person watching a run sees: the Lean file/check bar, and unwrapped stage titles."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from veriscale.pipeline.config import RunConfig
from veriscale.pipeline.progress import FileProgress
from veriscale.pipeline.run import run_pipeline


def test_file_progress_counts_files_and_checks_across_rounds() -> None:
    with Progress(console=Console(file=io.StringIO()), auto_refresh=False) as progress:
        bar = FileProgress(progress)
        bar.update("planned", 2, 700)
        bar.update("done", 1, 350)
        bar.update("planned", 1, 40)  # a later round of the same stage
        bar.update("done", 1, 350)
        (task,) = progress.tasks
        assert (bar.files_done, bar.files_total) == (2, 3)
        assert (task.completed, task.total) == (700, 740)
        assert task.description == "checks; files 2/3"


@contextmanager
def _logged(plain_every: float) -> Iterator[tuple[io.StringIO, FileProgress]]:
    """A classify stage's Lean bar on a console that is not a terminal (a log file)."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=100)
    with Progress(console=console, auto_refresh=False, transient=True) as progress:
        bar = FileProgress(progress, "classify", plain_every=plain_every)
        bar.label = "  lean"
        yield out, bar


def test_file_progress_prints_plain_lines_when_not_a_terminal() -> None:
    """A run logged to a file draws no bar; finished files still say how far it is."""
    with _logged(plain_every=3600) as (out, bar):
        bar.update("planned", 3, 3000)
        bar.update("done", 1, 1000)  # within plain_every of the start: no line yet
        bar.update("done", 1, 1000)
        assert out.getvalue() == ""
        bar.update("done", 1, 1000)  # the stage's last file always says so
    (line,) = [x for x in out.getvalue().splitlines() if x.strip()]
    assert line.startswith("  classify: lean files 3/3, checks 3,000/3,000, 0:0")
    assert line.endswith("about 0:00 left")
    shown = io.StringIO()
    with Progress(console=Console(file=shown, force_terminal=True), auto_refresh=False,
                  transient=True) as live:
        bar = FileProgress(live, "classify", plain_every=0)
        bar.update("planned", 1, 10)
        bar.update("done", 1, 10)
    assert "elapsed, about" not in shown.getvalue()  # a terminal has the bar instead


def test_checks_inside_a_running_file_advance_without_finishing_it() -> None:
    with _logged(plain_every=0) as (out, bar):
        bar.update("planned", 1, 1000)
        bar.update("checks", 0, 400)  # Lean got past 400 checks of its one file
        (task,) = bar.progress.tasks
        assert (bar.files_done, bar.checks_done, task.completed) == (0, 400, 400)
        bar.update("done", 1, 600)
        assert (bar.files_done, bar.checks_done, task.completed) == (1, 1000, 1000)
    lines = [x for x in out.getvalue().splitlines() if x.strip()]
    assert lines[0].startswith("  classify: lean files 0/1, checks 400/1,000")
    assert lines[-1].startswith("  classify: lean files 1/1, checks 1,000/1,000")


def test_stage_titles_do_not_wrap_when_not_a_terminal(bundled_dir: Path, tmp_path: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False)
    config = RunConfig.model_validate({
        "seed": 1, "tasks": ["vs_divmod"], "seeds": {"candidates_per_round": 2},
        "mutation": {"max_mutations_per_input": 1, "max_candidates_per_task": 10},
    })
    run_pipeline(bundled_dir, tmp_path / "run", config, reduce=False, report=False,
                 console=console)
    lines = out.getvalue().splitlines()
    assert any(line.startswith("stage classify: ") and line.endswith("tasks resumed)")
               for line in lines), lines[:20]


def test_the_progress_hook_reaches_the_lean_backend_through_the_cache(bundled_lean_dir: Path,
                                                                      tmp_path: Path) -> None:
    from veriscale.backends.cache import CachingBackend, OracleCache
    from veriscale.backends.lean.backend import LeanBackend
    from veriscale.backends.lean.runner import NativeRunner
    from veriscale.pipeline.run import Pipeline

    lean = LeanBackend(NativeRunner(lean_path="/nonexistent/lean", work_dir=tmp_path / "w"))
    wrapped = CachingBackend(lean, OracleCache(tmp_path / "c.sqlite"))
    pipe = Pipeline(bundled_lean_dir, tmp_path / "run", RunConfig(), backend=wrapped)  # type: ignore[arg-type]
    with Progress(console=Console(file=io.StringIO()), auto_refresh=False) as progress:
        files = FileProgress(progress)
        assert pipe._hook_progress(files) is lean and lean.progress == files.update
