"""Write a run's report: collect its figures, draw the plots, render ``report.md``.

Apart from :mod:`veriscale.report.report` (the figures and their markdown) so that
the plots, which read a :class:`~veriscale.report.report.RunReport`, sit between the
two and nothing imports in a circle.
"""

from __future__ import annotations

import logging
from pathlib import Path

from veriscale.report.report import RunReport, collect, render_markdown

log = logging.getLogger(__name__)


def write_report(run_dir: Path, *, plots: bool = True) -> Path:
    """Write ``RUN_DIR/report.md`` (and PNG plots next to it); return its path."""
    return build_report(run_dir, plots=plots)[0]


def build_report(run_dir: Path, *, plots: bool = True) -> tuple[Path, RunReport]:
    """Like :func:`write_report`, also returning the collected :class:`RunReport`."""
    from veriscale.atomic import write_text_atomic

    run_dir = Path(run_dir)
    report = collect(run_dir)
    if plots:
        from veriscale.report.plots import draw_all  # matplotlib: only when drawing

        try:
            report.plots = draw_all(report, run_dir)
        except Exception as exc:  # a plotting failure must not lose the report
            log.warning("plots failed: %s", exc)
    path = run_dir / "report.md"
    write_text_atomic(path, render_markdown(report))
    return path, report
