"""Cross-task batching: per-task code, one batch per round of oracle calls."""

from __future__ import annotations

import threading

from veriscale.backends.base import BackendStats, Outcome
from veriscale.backends.coalesce import coalesced_map


class BatchingOracle:
    """Answers `run` as x*2 and `postcondition_holds` as out == 2x; records each batch."""

    name = "batching"

    def __init__(self) -> None:
        self.stats = BackendStats()
        self.batches: list[list[str]] = []
        self.lock = threading.Lock()

    def evaluate_many(self, requests):
        with self.lock:
            self.batches.append([op for op, _ in requests])
        out = []
        for op, args in requests:
            if op == "run":
                task, _impl, inputs = args
                if task == "poison":
                    raise RuntimeError("bad task")
                out.append([Outcome(True, 2 * x) for x in inputs])
            elif op == "postcondition_holds":
                _task, _spec, pairs = args
                out.append([o == 2 * x for x, o in pairs])
            else:
                raise ValueError(op)
        return out


def per_task(task, backend):
    outs = backend.run(task, None, [1, 2, 3])
    verdicts = backend.postcondition_holds(task, None, [(1, o.value) for o in outs])
    return [o.value for o in outs], verdicts


def test_calls_of_all_tasks_share_batches():
    oracle = BatchingOracle()
    results = coalesced_map(oracle, per_task, [f"t{i}" for i in range(20)])
    assert all(r == ([2, 4, 6], [True, False, False]) for r in results)
    # two rounds of calls per task → two batches for all twenty tasks
    assert oracle.batches == [["run"] * 20, ["postcondition_holds"] * 20]


def test_one_poisoned_task_fails_alone():
    """The batch raised: the dispatcher retries request by request, and the poisoned
    task gets infrastructure failures (UNKNOWN), not the others' answers or theirs."""
    oracle = BatchingOracle()
    seen = {}

    def keep_outcomes(task, backend):
        seen[task] = backend.run(task, None, [1, 2, 3])
        return per_task(task, backend)

    results = coalesced_map(oracle, keep_outcomes, ["a", "poison", "b"])
    assert results[0] == results[2] == ([2, 4, 6], [True, False, False])
    assert all(o.inconclusive and o.error.startswith("infrastructure:")
               for o in seen["poison"])


def test_tasks_finishing_at_different_rounds():
    oracle = BatchingOracle()

    def uneven(task, backend):
        n = int(task)
        values = []
        for k in range(n):
            values.append(backend.run(task, None, [k])[0].value)
        return values

    results = coalesced_map(oracle, uneven, ["0", "1", "3", "2"])
    assert results == [[], [0], [0, 2, 4], [0, 2]]
    assert [len(b) for b in oracle.batches] == [3, 2, 1]


def test_without_evaluate_many_runs_in_order():
    class Plain:
        name = "plain"

        def run(self, task, impl, inputs):
            return [Outcome(True, 2 * x) for x in inputs]

        def postcondition_holds(self, task, spec, pairs):
            return [o == 2 * x for x, o in pairs]

    assert coalesced_map(Plain(), per_task, ["a", "b"]) == [
        ([2, 4, 6], [True, False, False])] * 2
