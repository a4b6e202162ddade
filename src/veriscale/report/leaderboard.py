"""The leaderboard's figure and page: a Figure-5-style PNG (grouped bars per suite,
error bars from the lower to the upper bound) and one self-contained HTML file
(no server, no network: the figure is embedded) with the table, the drops, the
rankings and, per task and model, the tests that failed each candidate."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after use(): the backend must be chosen first

from veriscale.evaluation.harness import COUNTEREXAMPLES
from veriscale.evaluation.leaderboard import Leaderboard

TITLES = {"code": "Code", "precond_postcond": "Spec sound & complete"}
DPI = 110


def plot_leaderboard(board: Leaderboard, path: Path) -> Path:
    """Per headline metric, bars of each model's lower-bound score on each suite, with
    an error bar up to its upper bound."""
    fig, axes = plt.subplots(1, len(board.metrics), figsize=(5 + 2.2 * len(board.suites)
                                                             * len(board.metrics), 4.2),
                             squeeze=False)
    width = 0.8 / max(1, len(board.models))
    for ax, metric in zip(axes[0], board.metrics, strict=True):
        for k, model in enumerate(board.models):
            xs = [i + (k - (len(board.models) - 1) / 2) * width for i in range(len(board.suites))]
            lows = [100 * (board.score(s, model, metric) or 0.0) for s in board.suites]
            gaps = [100 * (board.gap(s, model, metric) or 0.0) for s in board.suites]
            ax.bar(xs, lows, width, label=model)
            ax.errorbar(xs, lows, yerr=[[0.0] * len(gaps), gaps], fmt="none", ecolor="black",
                        capsize=3, linewidth=1)
        ax.set_xticks(range(len(board.suites)), [Path(s).name for s in board.suites])
        ax.set_ylim(0, 105)
        ax.set_ylabel("pass@1 (%)")
        ax.set_title(TITLES.get(metric, metric))
    axes[0][0].legend(fontsize="small", loc="best")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _cell(value: Any) -> str:
    return html.escape(value if isinstance(value, str)
                       else json.dumps(value, ensure_ascii=False, default=str))


def render_html(board: Leaderboard, png: Path | None = None) -> str:
    """The page as one string (the PNG, when given, embedded as data)."""
    e = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>VeriScale leaderboard"
           "</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
           "collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:"
           "right}td.l,th.l{text-align:left}code{white-space:pre-wrap}"
           "img{max-width:100%;height:auto}</style></head><body>",
           "<h1>Leaderboard</h1>",
           f"<p>Suites: {', '.join(e(s) for s in board.suites)}. Scores are pass@1 in %, "
           "lower bound (UNKNOWN counts as not passing) and upper bound (as passing); drops "
           f"are from {e(board.suites[0])}, with a 95 % bootstrap interval over tasks "
           f"({board.rounds} rounds, seed {board.seed}).</p>"]
    if png is not None and png.exists():
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        out.append(f"<img alt='scores per suite' src='data:image/png;base64,{data}'>")
    out.append("<table><tr><th class='l'>suite</th><th class='l'>model</th>"
               "<th class='l'>metric</th><th>lower</th><th>upper</th><th>gap</th>"
               "<th>rank</th><th>drop [95 % CI]</th></tr>")
    for r in board.rows():
        drop = ("" if r["drop"] is None else
                f"{_pct(r['drop'])} [{_pct(r['drop_low'])}, {_pct(r['drop_high'])}]")
        out.append(f"<tr><td class='l'>{e(r['suite'])}</td><td class='l'>{e(r['model'])}</td>"
                   f"<td class='l'>{e(r['metric'])}</td><td>{_pct(r['lower'])}</td>"
                   f"<td>{_pct(r['upper'])}</td><td>{_pct(r['gap'])}</td>"
                   f"<td>{r['rank']:g}</td><td>{drop}</td></tr>")
    out.append("</table><h2>Rank agreement (Kendall's tau)</h2><table><tr>"
               "<th class='l'>metric</th><th class='l'>suites</th><th>tau</th></tr>")
    for metric in board.metrics:
        for i, a in enumerate(board.suites):
            for b in board.suites[i + 1:]:
                tau = board.tau(a, b, metric)
                out.append(f"<tr><td class='l'>{e(metric)}</td><td class='l'>{e(a)} vs "
                           f"{e(b)}</td><td>{'n/a' if tau is None else f'{tau:.3f}'}</td></tr>")
    out.append("</table><h2>What failed each candidate</h2>"
               "<p>Per suite, task and model, each failing sample's tests, the smallest "
               "first.</p>")
    for suite in board.suites:
        out.append(f"<h3>{e(suite)}</h3>")
        for model in board.models:
            for t in board.reports[suite][model].tasks:
                for smp in t.samples:
                    if not smp.counterexamples and not smp.errors:
                        continue
                    out.append(f"<details><summary>{e(t.task_id)} — {e(model)} sample "
                               f"{smp.sample}</summary>")
                    for part, why in sorted(smp.errors.items()):
                        out.append(f"<p>{e(part)}: <code>{e(why)}</code></p>")
                    for metric, every in sorted(smp.counterexamples.items()):
                        cases = every[:COUNTEREXAMPLES]
                        more = (f" ({len(every)} failing tests; the {len(cases)} smallest)"
                                if len(every) > len(cases) else "")
                        out.append(f"<p>{e(metric)}{more}</p><table><tr><th class='l'>input</th>"
                                   "<th class='l'>wanted</th><th class='l'>gave</th></tr>")
                        for c in cases:
                            wanted = c.get("expected", c.get("output"))
                            want = (_cell(wanted) if "wanted" not in c
                                    else f"{_cell(c['wanted'])}" + (
                                        f" for {_cell(c['output'])}" if "output" in c else ""))
                            out.append(f"<tr><td class='l'><code>{_cell(c['input'])}</code></td>"
                                       f"<td class='l'>{want}</td><td class='l'><code>"
                                       f"{_cell(c.get('got'))}</code></td></tr>")
                        out.append("</table>")
                    out.append("</details>")
    out.append("</body></html>")
    return "\n".join(out)
