"""The report's LLM section: a loud fallback notice and per-task LLM figures.

Per task and role: items asked for, proposed by the model, kept, dropped by
reason, re-asks, truncated answers and the offline share, read from the
``llm`` accounting that the candidates and adversaries artifacts carry.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

ROLE_PARTS = (("seeds", "candidates", ()), ("spec", "adversaries", ("spec",)),
              ("redteam", "adversaries", ("redteam",)))


def _dropped(d: Any) -> str:
    if not isinstance(d, dict) or not d:
        return "0"
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items()))


def render_llm(run_dir: Path, manifest: dict[str, Any], task_ids: list[str],
               read_artifact: Callable[[Path, str, str], Any],
               table: Callable[..., list[str]]) -> list[str]:
    usage = manifest.get("llm_usage") if isinstance(manifest.get("llm_usage"), dict) else {}
    lines = ["## LLM", ""]
    fallback = usage.get("fallback") if isinstance(usage, dict) else None
    if isinstance(fallback, dict) and fallback:
        mode = str(fallback.get("mode", "?"))
        what = ("the run continued OFFLINE (fallback = \"offline\"): offline seeds, "
                "specifications and adversaries stand in, and those stages are provisional "
                "(the next run asks again)") if mode == "offline" else "the run STOPPED"
        lines += [f"**WARNING: the LLM endpoint was unusable; {what}.** "
                  f"Reason: {fallback.get('reason', '?')}", ""]
    for key in ("cost_note", "usage_note"):
        if isinstance(usage, dict) and usage.get(key):
            lines += [f"Note: {usage[key]}", ""]
    rows = []
    for task_id in task_ids:
        for role, stage, path in ROLE_PARTS:
            record = read_artifact(run_dir, task_id, stage)  # a typed stage record
            if record is None:
                continue
            provisional = bool(getattr(record, "llm_provisional", None))  # this record's
            acc: Any = getattr(record, "llm", None) or {}
            for part in path:
                acc = acc.get(part) if isinstance(acc, dict) else None
            if not isinstance(acc, dict) or not acc:
                continue
            rows.append([task_id, role, str(acc.get("asked", 0)), str(acc.get("proposed", "")),
                         str(acc.get("kept", 0)), _dropped(acc.get("dropped")),
                         str(acc.get("reasks", 0)), str(acc.get("truncated", 0)),
                         str(acc.get("requests_failed", 0)),
                         str(acc.get("offline_fallback", 0))
                         + (" (provisional)" if provisional else "")])
    if rows:
        lines += table(["Task", "Role", "Asked", "Proposed", "Kept", "Dropped (reason n)",
                        "Re-asks", "Truncated", "Failed requests", "Offline fallback"],
                       rows, "llrrrlrrrl")
    elif len(lines) == 2:
        return []  # an offline run: the "LLM usage" section already says so
    return lines
