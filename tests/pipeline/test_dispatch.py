"""The one dispatcher: one result per item, failures as values, batch used when declared."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from veriscale.backends import dispatch
from veriscale.backends.base import (
    BackendStats,
    BatchBackend,
    Classification,
    FailureKind,
    Label,
    Outcome,
    Verdict,
)


class Plain:
    """Protocol calls only; misbehaves on demand (raise, or a wrong count)."""

    name = "plain"

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.stats = BackendStats()
        self.calls: list[str] = []

    def _answer(self, op, items, make):
        self.calls.append(op)
        if self.mode == "raise":
            raise RuntimeError("checker died")
        if self.mode == "short":
            return [make(x) for x in items][:-1]
        return [make(x) for x in items]

    def check_inputs(self, task, inputs):
        return self._answer("check_inputs", inputs, lambda x: None)

    def classify(self, task, inputs):
        return self._answer("classify", inputs, lambda x: Classification(Label.EXPECTED, "d"))

    def run(self, task, impl, inputs):
        return self._answer("run", inputs, lambda x: Outcome(True, x))

    def precondition_holds(self, task, spec, inputs):
        return self._answer("precondition_holds", inputs, lambda x: Verdict.TRUE)

    def postcondition_holds(self, task, spec, pairs):
        return self._answer("postcondition_holds", pairs, lambda x: Verdict.TRUE)

    def compile(self, task, impl=None, spec=None):
        self.calls.append("compile")
        if self.mode == "raise":
            raise RuntimeError("checker died")
        return None

    def close(self):
        pass


class Batch(Plain):
    def __init__(self, mode: str = "ok", batch_mode: str = "ok") -> None:
        super().__init__(mode)
        self.batch_mode = batch_mode
        self.batches: list[int] = []

    def evaluate_many(self, requests):
        self.batches.append(len(requests))
        if self.batch_mode == "raise" and len(requests) > 1:
            raise RuntimeError("batch lost")
        out = [[getattr(self, op)(*args)] if op == "compile" else getattr(self, op)(*args)
               for op, args in requests]
        return out[:-1] if self.batch_mode == "drop" and len(out) > 1 else out


OPS = ["check_inputs", "classify", "run", "precondition_holds", "postcondition_holds",
       "compile"]


def request(op: str, n: int):
    items = list(range(n))
    if op in ("check_inputs", "classify"):
        return (op, ("t", items))
    if op == "compile":
        return (op, ("t", None, None))
    if op == "postcondition_holds":
        return (op, ("t", None, [(x, x) for x in items]))
    return (op, ("t", None, items))


@given(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 4)), max_size=8),
       st.sampled_from(["ok", "raise", "short"]), st.sampled_from(["ok", "raise", "drop"]),
       st.booleans())
def test_one_result_per_item_whatever_the_backend_does(reqs, mode, batch_mode, batching):
    backend = Batch(mode, batch_mode) if batching else Plain(mode)
    requests = [request(op, n) for op, n in reqs]
    answers = dispatch.answer(backend, requests)
    assert len(answers) == len(requests)
    for (op, args), got in zip(requests, answers, strict=True):
        assert len(got) == dispatch.item_count(op, args)
        if (mode != "ok" and got and op != "compile") or (mode == "raise" and op == "compile"):
            for value in got:  # a failing backend is UNKNOWN, never a verdict
                if op == "run":
                    assert value.kind is FailureKind.INFRASTRUCTURE
                elif op == "classify":
                    assert value.label is Label.UNKNOWN
                elif op in ("precondition_holds", "postcondition_holds"):
                    assert value is Verdict.UNKNOWN
                else:
                    assert value.startswith("infrastructure:")


def test_the_batch_capability_is_used_in_one_call():
    backend = Batch()
    assert isinstance(backend, BatchBackend) and not isinstance(Plain(), BatchBackend)
    dispatch.answer(backend, [request("run", 2), request("classify", 3), request("compile", 1)])
    assert backend.batches == [3]


def test_a_raising_batch_is_retried_per_request():
    backend = Batch(batch_mode="raise")
    out = dispatch.many(backend, "run", [("t", None, [1, 2]), ("t", None, [3])])
    assert [[o.value for o in r] for r in out] == [[1, 2], [3]]
    assert backend.batches == [2, 1, 1]


def test_requests_without_items_never_reach_the_backend():
    backend = Plain()
    assert dispatch.many(backend, "classify", [("t", []), ("t", [])]) == [[], []]
    assert backend.calls == []


class SideBySide(Plain):
    """Two requests at once: each call waits until the other has started too."""

    side_by_side = 2

    def __init__(self, mode: str = "ok") -> None:
        super().__init__(mode)
        self.barrier = threading.Barrier(2, timeout=10)

    def run(self, task, impl, inputs):
        self.barrier.wait()  # BrokenBarrierError (a failure value) if run one at a time
        return super().run(task, impl, inputs)


def test_requests_are_answered_side_by_side_where_the_backend_can() -> None:
    be = SideBySide()
    got = dispatch.answer(be, [("run", (None, None, [1, 2])), ("run", (None, None, [3]))])
    assert got == [[Outcome(True, 1), Outcome(True, 2)], [Outcome(True, 3)]]
    # in order, each request its own answers; and a raising one fails only its own items
    be = SideBySide("raise")
    got = dispatch.answer(be, [("run", (None, None, [1])), ("run", (None, None, [2, 3]))])
    assert [len(g) for g in got] == [1, 2]
    assert all(not o.ok and o.error.startswith("infrastructure:") for g in got for o in g)


def test_by_default_requests_are_answered_one_at_a_time() -> None:
    be = SideBySide()
    be.side_by_side = 1  # the barrier then never fills: each call fails after its timeout
    be.barrier = threading.Barrier(2, timeout=0.2)
    got = dispatch.answer(be, [("run", (None, None, [1])), ("run", (None, None, [2]))])
    assert all(not o.ok for g in got for o in g)
