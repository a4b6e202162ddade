"""Content hashes of tasks: the keys of caches and of resumable stage artifacts."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from veriscale.benchmark.model import Task


def task_fingerprint(task: Task) -> str:
    """Changes whenever anything an oracle could depend on changes."""
    sig = task.signature
    doc = {
        "id": task.id,
        "signature": sig.to_json(),
        "tests": [
            [
                sig.encode_input(t.input),
                sig.encode_output(t.expected),
                [sig.encode_output(u) for u in t.unexpected],
            ]
            for t in task.tests
        ],
        "rejects": [sig.encode_input(r) for r in task.reject_inputs],
        "lean": task.lean.source if task.lean else "",
        "python": task.python.source if task.python else "",
        **_later_languages(task),
    }
    blob = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def code_fingerprint(task: Task) -> str:
    """Only the task's code and signature (tests excluded): the key of oracle results."""
    doc = {
        "signature": task.signature.to_json(),
        "lean": task.lean.source if task.lean else "",
        "python": task.python.source if task.python else "",
        **_later_languages(task),
    }
    blob = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _later_languages(task: Task) -> dict[str, Any]:
    """Sections of languages added after the keys above were fixed (Coq): every field,
    since a task built in memory (``port``) has no ``source``. Present only for such a
    task, so the keys of existing Lean and Python runs stay as they were."""
    if task.coq is None:
        return {}
    return {"coq": dataclasses.asdict(task.coq)}
