"""Publish the ground-truth audit of VERINA: a Markdown page and the same figures as JSON,
written from the audit's run directories (one per language), never by hand.

    veriscale audit ../shared/data/verina-coq --backend coq --out RUN_COQ
    python3 benchmarks/verina_audit_results.py --run coq=RUN_COQ [--run lean=RUN_LEAN] \\
        --out docs/results/verina-audit

writes ``docs/results/verina-audit.md`` and ``docs/results/verina-audit.json``: per
language, the tasks audited and flagged (by kind), the wall time, the reference costs
(timeouts: a cost, never a finding); one row per finding with its count and its smallest
witness in the task's own language; and, where two languages were audited, which tasks
both flag, and of what kind.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from veriscale.pipeline.audit import KINDS


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def language_figures(run: Path) -> dict[str, Any]:
    """One language's audit, from ``RUN/audit.json`` and the run's manifest."""
    audit = _read(run / "audit.json")
    if not audit:
        raise SystemExit(f"{run}: no audit.json (run `veriscale audit` first)")
    manifest = _read(run / "manifest.json")
    timings = manifest.get("timings") or {}  # this run's (a resumed run's: its last resume's)
    findings = audit.get("findings", [])
    several = sorted({f["task"] for f in findings if f.get("several_answers")})
    return {
        "tasks": audit.get("tasks"),
        "tasks_flagged": audit.get("tasks_flagged"),
        "tasks_flagged_one_answer": len({f["task"] for f in findings
                                         if not f.get("several_answers")}),
        "tasks_flagged_several_answers": several,
        "tasks_flagged_by_kind": audit.get("tasks_flagged_by_kind", {}),
        "findings": findings,
        "accepted_multiple": audit.get("accepted_multiple", []),
        "unaudited": audit.get("unaudited", {}),
        "costs": audit.get("costs", {}),
        "wall_seconds": timings.get("total"),
        # stages whose records came from an earlier run: the wall time is the last run's
        "resumed_stages": sorted(k for k, v in (manifest.get("resumed_tasks") or {}).items()
                                 if v),
        "failed_tasks": manifest.get("errors", {}),
    }


def agreement(langs: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """Where two languages were audited: the tasks each flags, and those both flag (by
    kind as well as at all)."""
    if len(langs) != 2:
        return None
    (a, fa), (b, fb) = sorted(langs.items())
    flagged = {n: {f["task"] for f in f_["findings"]} for n, f_ in ((a, fa), (b, fb))}
    kinds = {n: {(f["task"], f["kind"]) for f in f_["findings"]} for n, f_ in ((a, fa), (b, fb))}
    return {
        "languages": [a, b],
        "flagged_by_both": sorted(flagged[a] & flagged[b]),
        f"flagged_by_{a}_only": sorted(flagged[a] - flagged[b]),
        f"flagged_by_{b}_only": sorted(flagged[b] - flagged[a]),
        "same_kind_by_both": sorted(f"{t}: {k}" for t, k in kinds[a] & kinds[b]),
    }


def _witness(w: dict[str, Any]) -> str:
    """A witness on one table line (its values are already in the task's language)."""
    inp = w.get("input")
    if isinstance(inp, dict):
        inp = ", ".join(f"{k} = {v}" for k, v in inp.items())
    parts = [f"input {inp}"]
    for key, label in (("reference", "reference"), ("other", "other"),
                       ("expected", "expected"), ("why", "why"), ("error", "error"),
                       ("row", "row")):
        if w.get(key) not in (None, ""):
            parts.append(f"{label} {w[key]}")
    text = "; ".join(str(p) for p in parts)
    text = text if len(text) <= 240 else text[:237] + "..."
    return text.replace("|", "\\|").replace("\n", " ")


def page(f: dict[str, Any]) -> str:
    lines = [
        "# The ground truth of VERINA, audited",
        "",
        "Written by `benchmarks/verina_audit_results.py` from the audit's run directories.",
        "A finding rests only on definite verdicts of the language's own checker; a reference",
        "that runs out of time is a cost, listed apart, never a finding. Tasks whose",
        "description allows several answers are marked and ranked last: their",
        "`postcondition_accepts_other_output` may be the description's intent.",
        "",
        "Kinds, most serious first: " + ", ".join(f"`{k}`" for k in KINDS) + ".",
    ]
    for lang, lf in f["languages"].items():
        lines += [
            "", f"## {lang}", "",
            f"- tasks audited: {lf['tasks']}; flagged: {lf['tasks_flagged']} "
            f"({lf['tasks_flagged_one_answer']} whose description asks for one answer; "
            f"{len(lf['tasks_flagged_several_answers'])} that allow several: "
            f"{', '.join(lf['tasks_flagged_several_answers']) or 'none'})",
            "- tasks flagged, by kind: " + (", ".join(
                f"{k} {v}" for k, v in lf["tasks_flagged_by_kind"].items()) or "none"),
            f"- wall time of the run that gathered the evidence: "
            f"{lf['wall_seconds'] if lf['wall_seconds'] is not None else '-'} s"
            + (f" (its last resume only: the records of {', '.join(lf['resumed_stages'])} "
               "came, for some or all tasks, from earlier runs of the same directory)"
               if lf.get("resumed_stages") else ""),
        ]
        if lf["failed_tasks"]:
            lines.append(f"- tasks the run lost: {', '.join(sorted(lf['failed_tasks']))}")
        if lf["unaudited"]:
            lines.append(f"- tasks whose records could not be read: "
                         f"{', '.join(sorted(lf['unaudited']))}")
        costs = {t: c for t, c in lf["costs"].items() if c}
        if costs:
            lines.append("- reference costs (not findings): " + ", ".join(
                f"{t} ({', '.join(f'{k} {v}' for k, v in c.items())})"
                for t, c in sorted(costs.items())))
        lines += ["", "| task | kind | count | several answers | smallest witness |",
                  "|---|---|---|---|---|"]
        for x in lf["findings"]:
            lines.append(f"| {x['task']} | {x['kind']} | {x['count']} | "
                         f"{'yes' if x.get('several_answers') else ''} | "
                         f"{_witness(x['witness'])} |")
        if lf["accepted_multiple"]:
            lines += ["", "Judged by a maintainer to allow several answers (silenced): "
                      + ", ".join(sorted({x["task"] for x in lf["accepted_multiple"]}))]
    ag = f.get("agreement")
    if ag:
        a, b = ag["languages"]
        lines += [
            "", f"## {a} and {b}", "",
            f"- flagged by both: {len(ag['flagged_by_both'])}: "
            + (", ".join(ag["flagged_by_both"]) or "none"),
            "- with the same kind: " + (", ".join(ag["same_kind_by_both"]) or "none"),
            f"- {a} only: " + (", ".join(ag[f"flagged_by_{a}_only"]) or "none"),
            f"- {b} only: " + (", ".join(ag[f"flagged_by_{b}_only"]) or "none"),
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="append", required=True, metavar="LANGUAGE=RUN_DIR",
                    help="an audited run directory and its language (repeatable)")
    ap.add_argument("--out", type=Path, required=True,
                    help="output path without suffix (.md and .json are written)")
    args = ap.parse_args()
    langs: dict[str, dict[str, Any]] = {}
    for spec in args.run:
        lang, sep, path = spec.partition("=")
        if not sep:
            raise SystemExit(f"--run {spec!r}: write LANGUAGE=RUN_DIR")
        langs[lang] = language_figures(Path(path))
    figures: dict[str, Any] = {"languages": langs, "agreement": agreement(langs)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(figures, indent=2, ensure_ascii=False)
                                             + "\n")
    args.out.with_suffix(".md").write_text(page(figures))
    print(f"wrote {args.out.with_suffix('.md')} and {args.out.with_suffix('.json')}")


if __name__ == "__main__":
    main()
