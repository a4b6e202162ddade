"""Content hashes of tasks: the keys of caches and of resumable stage artifacts."""

from __future__ import annotations

import hashlib
import json

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
    }
    blob = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def code_fingerprint(task: Task) -> str:
    """Only the task's code and signature (tests excluded): the key of oracle results."""
    doc = {
        "signature": task.signature.to_json(),
        "lean": task.lean.source if task.lean else "",
        "python": task.python.source if task.python else "",
    }
    blob = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
