"""The cache keys of a Coq task follow its ``task.v``: two tasks with one signature
never share oracle answers, and the keys of Lean and Python tasks stay as they were."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from coq_paths import DATA

from veriscale.backends.coq.sections import coq_sections
from veriscale.backends.datasets import load_benchmark
from veriscale.benchmark.fingerprint import code_fingerprint, task_fingerprint

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "veriscale" / "examples"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"VERINA-Coq data not found at {DATA}")


def _coq_task(task_id: str):
    return load_benchmark(DATA, tasks=[task_id])[0][0]


@needs_data
def test_two_coq_tasks_with_one_signature_have_different_keys():
    a, b = _coq_task("verina_basic_1"), _coq_task("verina_basic_1")
    b = b.with_section("coq", dataclasses.replace(coq_sections(b), code=coq_sections(b).code + " "))
    assert a.signature == b.signature
    assert code_fingerprint(a) != code_fingerprint(b)
    assert task_fingerprint(a) != task_fingerprint(b)


@needs_data
def test_a_coq_task_without_source_text_is_keyed_by_its_sections():
    """A task built in memory (``veriscale port``) has no ``source``."""
    task = _coq_task("verina_basic_1")
    bare = task.with_section("coq", dataclasses.replace(coq_sections(task), source=""))
    changed = bare.with_section("coq", dataclasses.replace(coq_sections(bare), postcond="false"))
    assert code_fingerprint(bare) != code_fingerprint(changed)


@pytest.mark.parametrize("example, code_key, task_key", [
    ("bundled", "d8c44d124ac9f22d", "1f3526ecd3a21456"),
    ("bundled_lean", "88a5fba89162dfa0", "570314aeca15198e"),
])
def test_lean_and_python_keys_are_unchanged(example, code_key, task_key):
    """Values computed by the fingerprints before Coq entered them (commit 0e015b3):
    existing oracle caches and resumable runs stay valid."""
    task = next(t for t in load_benchmark(EXAMPLES / example)[0] if t.id == "vs_argmax")
    assert (code_fingerprint(task), task_fingerprint(task)) == (code_key, task_key)
