"""Read any supported benchmark folder: a folder of task folders, each in the task
directory format of one language plug-in (VERINA's Lean or Coq track, Python-spec
tasks). One bad task never stops the others: its problems come back as
:class:`LoadIssue` records. Reading a folder means asking the plug-ins which of them
owns it, so this sits above the plug-in registry, not in the task model.
"""

from __future__ import annotations

import re
from pathlib import Path

from veriscale.backends.language import plugin_for_dir, task_files
from veriscale.benchmark.model import LoadIssue, Task
from veriscale.benchmark.validate import TaskReport, ValidationReport, lint


class NotADataset(ValueError):
    """The folder holds no task folders at all."""


def natural_key(name: str) -> list[object]:
    """Sort ``verina_basic_2`` before ``verina_basic_10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def task_dirs(root: Path) -> list[Path]:
    """The task folders of ``root``: those holding a file some plug-in marks a task by."""
    root = Path(root)
    if not root.is_dir():
        raise NotADataset(f"{root} is not a directory")
    names = task_files()
    dirs = [d for d in root.iterdir() if d.is_dir() and any((d / n).exists() for n in names)]
    if not dirs:
        raise NotADataset(f"{root} holds no task folders (no {' / '.join(names)})")
    return sorted(dirs, key=lambda d: natural_key(d.name))


def detect_format(task_dir: Path) -> str:
    """The name of a task folder's format (its language plug-in's ``format_name``:
    ``python``, ``coq`` or ``verina``)."""
    return plugin_for_dir(task_dir).format_name


def load_benchmark(
    root: Path, tasks: list[str] | None = None
) -> tuple[list[Task], list[LoadIssue]]:
    """All loadable tasks of ``root`` (optionally only ids in ``tasks``) and the issues found;
    each folder is read by the language plug-in that owns it."""
    loaded: list[Task] = []
    issues: list[LoadIssue] = []
    wanted = set(tasks) if tasks else None
    for d in task_dirs(root):
        if wanted is not None and d.name not in wanted:
            continue
        task, task_issues = plugin_for_dir(d).load_task_dir(d)
        issues.extend(task_issues)
        if task is not None:
            loaded.append(task)
    if wanted:
        missing = wanted - {t.id for t in loaded} - {i.task for i in issues}
        for name in sorted(missing):
            issues.append(LoadIssue(name, "", "", "missing_task", f"no task {name!r} in {root}"))
    return loaded, issues


def lint_task_dir(path: Path) -> TaskReport:
    """``validate``'s report of one task folder: its plug-in loads it and gives its
    rows; the judging is the same for every format."""
    plugin = plugin_for_dir(path)
    task, issues = plugin.load_task_dir(path)
    rows = plugin.lint_rows(path, task) if task is not None else None
    return lint(Path(path).name, task, issues, rows, plugin.load_warnings)


def validate_dataset(root: Path) -> ValidationReport:
    """Read and lint every task folder of ``root`` (each by its language plug-in);
    raises ``NotADataset``."""
    return ValidationReport([lint_task_dir(d) for d in task_dirs(Path(root))])
