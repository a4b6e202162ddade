"""Consistency of the bundled example benchmark (Python-spec tasks and their Lean twins).

The bundled tasks are our own trusted files, so their ``task.py`` is executed
in-process here (the pipeline itself always runs task code in sandboxed workers).
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from veriscale.backends.language import plugin_for
from veriscale.backends.lean.sections import lean_sections
from veriscale.benchmark.model import Signature
from veriscale.benchmark.verina.codec import decode
from veriscale.values import (
    ArrayT,
    ListT,
    OptionT,
    ProdT,
    Scalar,
    Some,
    ValueType,
    check,
    from_native,
    to_native,
)

SECTIONS = ("aux", "precondition", "reference", "postcondition")
MARKER = re.compile(r"^# veriscale: (\w+)\s*$", re.M)

# Inputs with a second valid output (different from the reference's): proof that the
# tasks flagged ``several_valid_outputs`` really accept more than one answer.
ALTERNATIVES: dict[str, list[tuple[dict[str, Any], Any]]] = {
    "vs_sort_by_abs": [({"xs": "[3, -1, -3, 2]"}, "[-1, 2, -3, 3]")],
    "vs_sort_pairs_by_key": [({"pairs": "[(2, 1), (1, 5), (2, 0)]"}, "[(1, 5), (2, 0), (2, 1)]")],
    "vs_binary_search": [({"arr": "#[2, 2, 2, 2]", "target": 2}, "some 0"),
                         ({"arr": "#[2, 2, 2, 2]", "target": 2}, "some 3")],
    "vs_argmax": [({"xs": "[4, 9, 9, 2]"}, 2)],
    "vs_most_frequent": [({"xs": "[5, 6, 6, 5]"}, 6)],
    "vs_two_sum": [({"nums": "[1, 2, 3, 4]", "target": 5}, "(0, 3)")],
}

LEAN_MARKERS = (
    "-- !benchmark @start import type=solution", "-- !benchmark @end import",
    "-- !benchmark @start solution_aux", "-- !benchmark @end solution_aux",
    "-- !benchmark @start precond_aux", "-- !benchmark @end precond_aux",
    "-- !benchmark @start precond", "-- !benchmark @end precond",
    "-- !benchmark @start code_aux", "-- !benchmark @end code_aux",
    "-- !benchmark @start code", "-- !benchmark @end code",
    "-- !benchmark @start postcond_aux", "-- !benchmark @end postcond_aux",
    "-- !benchmark @start postcond", "-- !benchmark @end postcond",
    "-- !benchmark @start proof_aux", "-- !benchmark @end proof_aux",
    "-- !benchmark @start proof", "-- !benchmark @end proof",
)
VERINA_KEYS = {"id", "signature", "description_file", "lean_file", "specification",
               "metadata", "test_file", "reject_inputs_file"}


@dataclass
class Bundled:
    """One bundled Python task, loaded and executed in-process."""

    id: str
    meta: dict[str, Any]
    sig: Signature
    sections: dict[str, str]
    pre: Callable[..., bool]
    ref: Callable[..., Any]
    post: Callable[..., bool]
    tests: list[dict[str, Any]]
    rejects: list[dict[str, Any]]

    def native(self, raw_input: dict[str, Any]) -> list[Any]:
        canon = self.sig.decode_input(raw_input)
        return [to_native(p.type, v) for p, v in zip(self.sig.params, canon, strict=True)]

    def out(self, raw: Any) -> Any:
        return to_native(self.sig.return_type, self.sig.decode_output(raw))

    def pre_of(self, args: list[Any]) -> bool:
        return self.pre(*copy.deepcopy(args))

    def post_of(self, args: list[Any], result: Any) -> bool:
        return self.post(*copy.deepcopy(args), copy.deepcopy(result))

    def ref_of(self, args: list[Any]) -> Any:
        """The reference output as a canonical value (ill-typed output raises)."""
        return from_native(self.sig.return_type, self.ref(*copy.deepcopy(args)))

    @property
    def trivial_pre(self) -> bool:
        body = [ln.strip() for ln in self.sections["precondition"].splitlines()
                if ln.strip() and not ln.strip().startswith("#")]
        return body[1:] == ["return True"]


def split_sections(source: str) -> dict[str, str]:
    found = MARKER.findall(source)
    assert tuple(found) == SECTIONS, f"sections {found}, want {SECTIONS}"
    parts = MARKER.split(source)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def load(task_dir: Path) -> Bundled:
    meta = json.loads((task_dir / "task.json").read_text(encoding="utf-8"))
    source = (task_dir / meta["code_file"]).read_text(encoding="utf-8")
    namespace: dict[str, Any] = {}
    exec(compile(source, str(task_dir / "task.py"), "exec"), namespace)  # trusted, our own files
    return Bundled(
        id=meta["id"], meta=meta, sig=Signature.from_json(meta["signature"]),
        sections=split_sections(source),
        pre=namespace["precondition"], ref=namespace["reference"], post=namespace["postcondition"],
        tests=json.loads((task_dir / meta["test_file"]).read_text(encoding="utf-8")),
        rejects=json.loads((task_dir / meta["reject_inputs_file"]).read_text(encoding="utf-8")),
    )


@pytest.fixture(scope="module")
def tasks(bundled_dir: Path) -> list[Bundled]:
    return [load(d) for d in sorted(bundled_dir.iterdir()) if (d / "task.json").exists()]


def test_counts(tasks: list[Bundled]) -> None:
    assert len(tasks) >= 26
    assert sum(not t.trivial_pre for t in tasks) >= 10
    multi = [t for t in tasks if t.meta["metadata"]["several_valid_outputs"]]
    assert len(multi) >= 3
    assert {t.id for t in multi} <= set(ALTERNATIVES), "each multi-valid task needs an alternative"


def test_layout(tasks: list[Bundled], bundled_dir: Path) -> None:
    for t in tasks:
        d = bundled_dir / t.id
        assert d.name == t.id and t.id.startswith("vs_")
        assert t.meta["format"] == "veriscale-python/1"
        desc = (d / "description.txt").read_text(encoding="utf-8")
        for head in ("-----Description-----", "-----Input-----", "-----Output-----"):
            assert head in desc, f"{t.id}: description.txt lacks {head}"
        assert len(t.tests) >= 3, t.id
        if not t.trivial_pre:
            assert t.rejects, f"{t.id}: non-trivial precondition without a reject input"


def test_tests_agree_with_reference_and_specification(tasks: list[Bundled]) -> None:
    for t in tasks:
        for k, tc in enumerate(t.tests):
            where = f"{t.id} test {k}"
            args = t.native(tc["input"])
            assert t.pre_of(args) is True, f"{where}: precondition rejects the input"
            expected = t.sig.decode_output(tc["expected"])
            assert t.ref_of(args) == expected, f"{where}: expected differs from reference"
            assert t.post_of(args, to_native(t.sig.return_type, expected)) is True, where
            assert 1 <= len(tc["unexpected"]) <= 4, where
            for u in tc["unexpected"]:
                assert t.sig.decode_output(u) != expected, f"{where}: unexpected {u!r} is expected"
                assert t.post_of(args, t.out(u)) is False, f"{where}: postcondition accepts {u!r}"


def test_reject_inputs_violate_precondition(tasks: list[Bundled]) -> None:
    for t in tasks:
        for k, rj in enumerate(t.rejects):
            assert t.pre_of(t.native(rj["input"])) is False, f"{t.id} reject {k}"


def test_several_valid_outputs(tasks: list[Bundled]) -> None:
    by_id = {t.id: t for t in tasks}
    for tid, cases in ALTERNATIVES.items():
        t = by_id[tid]
        assert t.meta["metadata"]["several_valid_outputs"] is True, tid
        for raw_input, raw_out in cases:
            args = t.native(raw_input)
            assert t.pre_of(args)
            alt = t.sig.decode_output(raw_out)
            assert alt != t.ref_of(args), f"{tid}: alternative equals the reference output"
            assert t.post_of(args, to_native(t.sig.return_type, alt)) is True, tid


# --- totality: specifications never crash on well-typed values --------------------------


def sample_values(t: ValueType, rng: random.Random, depth: int = 0) -> list[Any]:
    """A few canonical values of ``t``: edge cases plus random ones (deterministic via rng)."""
    if isinstance(t, Scalar):
        if t.name == "Nat":
            return [0, 1, 2, 7, 10**20 + 3, rng.randrange(50)]
        if t.name == "Int":
            return [0, -1, 1, 5, -(10**20), rng.randrange(-50, 50)]
        if t.name == "UInt8":
            return [0, 1, 255, rng.randrange(256)]
        if t.name == "Bool":
            return [False, True]
        if t.name == "Char":
            return ["a", " ", "0", "é"]
        if t.name == "String":
            return ["", "a", "0", "ab ba", " x  y ", "zé1"]
    if isinstance(t, (ListT, ArrayT)):
        elems = sample_values(t.elem, rng, depth + 1)
        size = 3 if depth else 6
        return [(), (elems[1],), (elems[0], elems[0]),
                tuple(rng.choice(elems) for _ in range(size)),
                tuple(rng.choice(elems) for _ in range(size + 1))]
    if isinstance(t, OptionT):
        return [None] + [Some(v) for v in sample_values(t.elem, rng, depth + 1)[:4]]
    if isinstance(t, ProdT):
        a = sample_values(t.fst, rng, depth + 1)
        b = sample_values(t.snd, rng, depth + 1)
        return [(x, y) for x in a[:3] for y in b[:3]]
    raise AssertionError(f"no sampler for {t}")


def test_specifications_are_total(tasks: list[Bundled]) -> None:
    rng = random.Random(20250101)
    for t in tasks:
        inputs = [t.sig.decode_input(tc["input"]) for tc in t.tests]
        inputs += [t.sig.decode_input(rj["input"]) for rj in t.rejects]
        columns = [sample_values(p.type, rng) for p in t.sig.params]
        inputs += [tuple(rng.choice(c) for c in columns) for _ in range(25)]
        results = sample_values(t.sig.return_type, rng)
        for inp in inputs:
            for p, v in zip(t.sig.params, inp, strict=True):
                assert check(p.type, v) is None
            args = [to_native(p.type, v) for p, v in zip(t.sig.params, inp, strict=True)]
            holds = t.pre_of(args)
            assert isinstance(holds, bool), f"{t.id}: precondition returned {holds!r}"
            if not holds:
                continue
            expected = t.ref_of(args)
            assert t.post_of(args, to_native(t.sig.return_type, expected)) is True, (t.id, inp)
            for r in results:
                verdict = t.post_of(args, to_native(t.sig.return_type, r))
                assert isinstance(verdict, bool), f"{t.id}: postcondition returned {verdict!r}"
                if verdict and t.meta["metadata"]["several_valid_outputs"] is False:
                    assert r == expected, f"{t.id}: accepts {r!r} besides {expected!r} on {inp}"


def test_specifications_are_fast_on_large_inputs(tasks: list[Bundled]) -> None:
    """60-element lists with 10^20-sized values: pre, reference and post well under a second."""
    rng = random.Random(7)

    def big(t: ValueType) -> Any:
        if isinstance(t, Scalar):
            return sample_values(t, rng)[-2] if t.name in ("Nat", "Int") else sample_values(t, rng)[-1]
        if isinstance(t, (ListT, ArrayT)):
            if isinstance(t.elem, Scalar) and t.elem.name in ("Nat", "Int"):
                low = 0 if t.elem.name == "Nat" else -(10**20)
                return tuple(sorted(rng.randint(low, 10**20) for _ in range(60)))
            return tuple(big(t.elem) for _ in range(60 if not isinstance(t.elem, ListT) else 8))
        if isinstance(t, ProdT):
            return (big(t.fst), big(t.snd))
        return sample_values(t, rng)[0]

    for t in tasks:
        inp = tuple(big(p.type) for p in t.sig.params)
        args = [to_native(p.type, v) for p, v in zip(t.sig.params, inp, strict=True)]
        def check(t=t, args=args) -> None:
            if t.pre_of(args):
                out = t.ref_of(args)
                assert t.post_of(args, to_native(t.sig.return_type, out)) is True, t.id

        # a budget of executed lines, not seconds: the same on a loaded machine
        steps = lines_executed(check)
        assert 0 < steps < STEP_BUDGET, f"{t.id}: {steps} lines on a 60-element input"


STEP_BUDGET = 2_000_000
"""Lines a bundled task may execute on a 60-element input (quadratic is a few 10^4)."""


def lines_executed(fn) -> int:
    """How many Python lines ``fn()`` executes (a deterministic cost measure)."""
    import sys

    count = [0]

    def tracer(frame, event, arg):
        if event == "line":
            count[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count[0]


def test_loader_reads_every_bundled_task(bundled_dir: Path) -> None:
    pytest.importorskip("veriscale.backends.python.format")
    from veriscale.backends.datasets import load_benchmark

    loaded, issues = load_benchmark(bundled_dir)
    assert not issues, [str(i) for i in issues]
    assert len(loaded) == len([d for d in bundled_dir.iterdir() if (d / "task.json").exists()])
    nontrivial = [t for t in loaded if not plugin_for(t).trivial_precondition(t)]
    assert len(nontrivial) >= 10


# --- Lean twins ---------------------------------------------------------------------------


def test_lean_twins(tasks: list[Bundled], bundled_lean_dir: Path) -> None:
    by_id = {t.id: t for t in tasks}
    twins = sorted(d for d in bundled_lean_dir.iterdir() if (d / "task.json").exists())
    assert len(twins) >= 6
    nontrivial = 0
    for d in twins:
        meta = json.loads((d / "task.json").read_text(encoding="utf-8"))
        assert set(meta) == VERINA_KEYS, d.name
        assert meta["id"] == d.name and d.name in by_id, d.name
        twin = by_id[d.name]
        assert meta["signature"] == twin.meta["signature"], d.name
        sig = Signature.from_json(meta["signature"])
        lean = (d / meta["lean_file"]).read_text(encoding="utf-8")
        positions = [lean.find(m + "\n") for m in LEAN_MARKERS]
        assert all(p >= 0 for p in positions) and positions == sorted(positions), d.name
        assert f"def {sig.name}_precond " in lean and f"def {sig.name}_postcond " in lean
        assert "import" not in lean.replace("import type=solution", "").replace(
            "@end import", ""), f"{d.name}: the Lean twins must not import anything"
        precond = lean.split("-- !benchmark @start precond\n")[1].split("-- !benchmark @end")[0]
        nontrivial += precond.strip() != "True"
        assert (precond.strip() == "True") == twin.trivial_pre, d.name
        tests = json.loads((d / meta["test_file"]).read_text(encoding="utf-8"))
        rejects = json.loads((d / meta["reject_inputs_file"]).read_text(encoding="utf-8"))

        def canon_tests(raw: list[dict[str, Any]], s: Signature = sig) -> list[Any]:
            return [(s.decode_input(tc["input"]), decode(s.return_type, tc["expected"]),
                     [decode(s.return_type, u) for u in tc["unexpected"]]) for tc in raw]

        assert canon_tests(tests) == canon_tests(twin.tests), d.name
        assert [sig.decode_input(r["input"]) for r in rejects] == [
            twin.sig.decode_input(r["input"]) for r in twin.rejects], d.name
    assert nontrivial >= 4


def test_loader_reads_every_lean_twin(bundled_lean_dir: Path) -> None:
    pytest.importorskip("veriscale.backends.lean.format")
    from veriscale.backends.datasets import load_benchmark

    loaded, issues = load_benchmark(bundled_lean_dir)
    assert not issues, [str(i) for i in issues]
    assert len(loaded) >= 6
    assert all(lean_sections(t) is not None and t.tests for t in loaded)
    assert sum(not plugin_for(t).trivial_precondition(t) for t in loaded) >= 4
