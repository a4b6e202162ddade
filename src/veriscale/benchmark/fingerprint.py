"""Content hashes of tasks: the keys of caches and of resumable stage artifacts."""

from __future__ import annotations

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
        **_sections(task),
    }
    blob = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def code_fingerprint(task: Task) -> str:
    """Only the task's code and signature (tests excluded): the key of oracle results."""
    doc = {
        "signature": task.signature.to_json(),
        **_sections(task),
    }
    blob = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


ALWAYS_KEYED = ("lean", "python")
"""Languages whose key every fingerprint holds, empty when the task has no such
sections: the first two languages' keys were written so, and existing run
directories and caches keep their keys."""


def _sections(task: Task) -> dict[str, Any]:
    """Each language's sections as the fingerprint holds them (their ``identity()``)."""
    doc: dict[str, Any] = dict.fromkeys(ALWAYS_KEYED, "")
    for language, sections in task.sections.items():
        doc[language] = sections.identity()
    return doc
