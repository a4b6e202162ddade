"""PNG plots for the run report (matplotlib, Agg backend: no display needed).

Each function draws one figure from a :class:`~veriscale.report.report.RunReport`
and returns the file it wrote, or ``None`` when the report lacks the data.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after use(): the backend must be chosen first
from matplotlib.ticker import MaxNLocator

if TYPE_CHECKING:
    from veriscale.report.report import RunReport

SUITE_COLOURS = {"original": "#7f7f7f", "plus": "#1f77b4", "lite": "#ff7f0e"}
METRICS = ("pairs", "unexpected_outputs", "unexpected_inputs")
METRIC_TITLES = {
    "pairs": "Expected pairs",
    "unexpected_outputs": "Unexpected outputs",
    "unexpected_inputs": "Unexpected inputs",
}
DPI = 110


def _width(n_tasks: int) -> float:
    return min(40.0, max(6.0, 0.25 * n_tasks + 2))


def _short(task_id: str) -> str:
    return task_id.removeprefix("verina_")


def plot_volumes(report: RunReport, out_dir: Path) -> Path | None:
    """Per-task grouped bars, original vs Plus vs Lite, one panel per Table 1 metric."""
    figs = [f for f in report.tasks if f.volumes]
    suites = [s for s in ("original", "plus", "lite") if any(s in f.volumes for f in figs)]
    if not figs or not suites:
        return None
    x = range(len(figs))
    bar = 0.8 / len(suites)
    fig, axes = plt.subplots(len(METRICS), 1, figsize=(_width(len(figs)), 9), sharex=True)
    for ax, metric in zip(axes, METRICS, strict=True):
        for k, suite in enumerate(suites):
            values = [f.volumes.get(suite, {}).get(metric, 0) for f in figs]
            ax.bar([i + (k - (len(suites) - 1) / 2) * bar for i in x], values, bar,
                   label=suite.capitalize(), color=SUITE_COLOURS[suite])
        ax.set_ylabel(METRIC_TITLES[metric])
        ax.set_yscale("symlog", linthresh=1)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=len(suites),
                   frameon=False)
    axes[0].set_title("Per-task suite volumes", loc="left")
    axes[-1].set_xticks(list(x), [_short(f.task_id) for f in figs], rotation=90, fontsize=7)
    fig.tight_layout()
    path = out_dir / "volumes.png"
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def plot_kill_coverage(report: RunReport, out_dir: Path) -> Path | None:
    """Per task: adversaries compiled, killed by Plus, killed by Lite."""
    figs = [f for f in report.tasks
            if f.adversaries_killing is not None or f.adversaries_compiled is not None]
    if not figs:
        return None
    series = [
        ("compiled", [f.adversaries_compiled for f in figs], "#c7c7c7"),
        ("killed by Plus", [f.adversaries_killing for f in figs], SUITE_COLOURS["plus"]),
        ("killed by Lite", [f.adversaries_killed_by_lite for f in figs], SUITE_COLOURS["lite"]),
    ]
    series = [(name, vals, c) for name, vals, c in series if any(v is not None for v in vals)]
    x = range(len(figs))
    bar = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(_width(len(figs)), 4.5))
    for k, (name, values, colour) in enumerate(series):
        ax.bar([i + (k - (len(series) - 1) / 2) * bar for i in x],
               [v or 0 for v in values], bar, label=name, color=colour)
    ax.set_ylabel("Adversaries")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Adversaries per task: compiled, and killed by each suite")
    ax.set_xticks(list(x), [_short(f.task_id) for f in figs], rotation=90, fontsize=7)
    ax.legend(loc="upper right")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = out_dir / "kill_coverage.png"
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def plot_timings(report: RunReport, out_dir: Path) -> Path | None:
    """Horizontal bars of wall time per stage (without the total)."""
    timings = report.manifest.get("timings")
    if not isinstance(timings, dict):
        return None
    stages = [(k, float(v)) for k, v in timings.items()
              if k != "total" and isinstance(v, int | float)]
    if not stages:
        return None
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(stages) + 1.2))
    ax.barh([k for k, _ in stages], [v for _, v in stages], color=SUITE_COLOURS["plus"])
    ax.invert_yaxis()
    ax.set_xlabel("Seconds")
    ax.set_title("Wall time per stage")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path = out_dir / "timings.png"
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def draw_all(report: RunReport, out_dir: Path) -> list[Path]:
    """Every plot the report has data for, written into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn = [plot(report, out_dir) for plot in (plot_volumes, plot_kill_coverage, plot_timings)]
    return [p for p in drawn if p is not None]
