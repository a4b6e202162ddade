"""The Ray executor on a local Ray instance (``ray.init(num_cpus=2)``): the bundled
benchmark gives the same ``plus/`` and ``lite/`` bytes as the local executor, also
when a Ray worker is killed mid-run; lost units and missing runners are
``infrastructure:`` failures naming the node."""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from exec_helpers import fake_lean, lean_task  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "coq"))
from coq_paths import COQC, DATA  # noqa: E402

from veriscale.backends.lean.backend import LeanBackend  # noqa: E402
from veriscale.backends.lean.runner import NativeRunner, WasmRunner  # noqa: E402
from veriscale.execution import UnitFailure  # noqa: E402
from veriscale.execution.ray_executor import RayExecutor  # noqa: E402
from veriscale.execution.units import ProverFile, run_prover_file  # noqa: E402
from veriscale.pipeline.config import RunConfig  # noqa: E402
from veriscale.pipeline.run import run_pipeline  # noqa: E402

pytestmark = pytest.mark.ray

TASKS = ["vs_argmax", "vs_binary_search", "vs_rotate_list"]
CONFIG = {"seed": 7, "tasks": TASKS, "mutation": {"max_mutations_per_input": 4},
          "seeds": {"candidates_per_round": 12}}
SMALL_UNITS = 256  # MB declared per unit: Ray sizes a local node by the memory free at start


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    for attempt in range(2):  # Ray gives its raylet 30 s to register: a busy machine misses it
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            break
        except Exception as exc:
            ray.shutdown()
            if attempt == 1:
                pytest.skip(f"a local Ray instance could not start on this machine: {exc}")
    yield
    ray.shutdown()


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def run(bundled: Path, out: Path, executor: str) -> dict:
    config = RunConfig.model_validate({**CONFIG, "execution": {
        "executor": executor, "unit_memory_mb": SMALL_UNITS}})
    result = run_pipeline(bundled, out, config, report=False)
    assert result.errors == {}
    import json

    return json.loads((out / "manifest.json").read_text())


@pytest.fixture(scope="module")
def local_run(bundled_dir: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "run"
    manifest = run(bundled_dir, out, "local")
    assert manifest["execution"]["executor"] == "local"
    return out


def test_ray_gives_the_local_bytes(bundled_dir: Path, local_run: Path, tmp_path: Path) -> None:
    manifest = run(bundled_dir, tmp_path / "ray", "ray")
    ex = manifest["execution"]
    assert ex["executor"] == "ray" and ex["units"] > 0 and ex["failed_units"] == 0
    assert tree(tmp_path / "ray" / "plus") == tree(local_run / "plus")
    assert tree(tmp_path / "ray" / "lite") == tree(local_run / "lite")


class WorkerKiller(threading.Thread):
    """SIGKILLs the first Ray worker seen executing a unit (``ray::veriscale_unit``)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.killed: list[int] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set() and not self.killed:
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    cmd = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                if cmd.startswith(b"ray::veriscale_unit"):
                    try:
                        os.kill(int(entry.name), signal.SIGKILL)
                    except ProcessLookupError:
                        continue
                    self.killed.append(int(entry.name))
                    return
            time.sleep(0.005)


def test_a_killed_worker_is_retried_and_the_bytes_stay(bundled_dir: Path, local_run: Path,
                                                       tmp_path: Path) -> None:
    killer = WorkerKiller()
    killer.start()
    try:
        manifest = run(bundled_dir, tmp_path / "ray", "ray")
    finally:
        killer.stop.set()
        killer.join()
    assert killer.killed, "no Ray worker was caught running a unit"
    assert manifest["execution"]["failed_units"] == 0
    assert tree(tmp_path / "ray" / "plus") == tree(local_run / "plus")
    assert tree(tmp_path / "ray" / "lite") == tree(local_run / "lite")


def test_verify_on_ray_reports_like_local(local_run: Path) -> None:
    from veriscale.evaluation.verify import verify_dataset

    ex = RayExecutor(memory_mb=SMALL_UNITS)
    there = verify_dataset(local_run / "lite", "python", executor=ex)  # first: nothing cached
    here = verify_dataset(local_run / "lite", "python")
    assert there.to_json()["checks"] == here.to_json()["checks"]
    assert there.to_json()["per_task"] == here.to_json()["per_task"]
    assert not there.disagreements and ex.describe()["units"] > 0


def test_results_in_order_and_a_unit_that_keeps_dying_is_unknown() -> None:
    ex = RayExecutor(max_retries=1)
    assert ex.map(abs, [-3, 2, -1]) == [3, 2, 1]
    (lost,) = ex.map(os._exit, [3])  # the worker dies on every attempt
    assert isinstance(lost, UnitFailure)
    assert lost.error.startswith("infrastructure: ray: _exit failed after 2 attempt(s)")
    assert ex.describe()["failed_units"] == 1
    ex.close()
    assert ray.is_initialized()  # a Ray started by the caller stays up


def test_a_unit_no_node_can_hold_fails_at_once() -> None:
    from veriscale.backends.lean.running import LEAN_UNIT

    nodes = ray.nodes()
    biggest = max(n["Resources"].get("memory", 0) for n in nodes if n["Alive"]) / 2**20
    ex = RayExecutor(memory_mb=int(biggest) + 1024)  # Ray would wait forever for such a node
    (failure,) = ex.map(abs, [-1])
    assert isinstance(failure, UnitFailure)
    assert "no node of the Ray cluster offers 1 CPU and" in failure.error
    assert LEAN_UNIT.memory_mb == 4096 and LEAN_UNIT.cpus == 1


def test_a_node_without_the_runner_is_named(tmp_path: Path) -> None:
    ex = RayExecutor(max_retries=0, memory_mb=SMALL_UNITS)
    missing = NativeRunner(lean_path=str(tmp_path / "no-such-lean"), timeout=10)
    empty = WasmRunner(cache_dir=tmp_path / "empty-cache", auto_install=False)
    got = ex.map(run_prover_file, [ProverFile(missing, "a.lean", "#check Nat\n"),
                                   ProverFile(empty, "b.lean", "#check Nat\n")])
    host = socket.gethostname()
    for failure, what in zip(got, ("native runner", "wasm runner"), strict=True):
        assert isinstance(failure, UnitFailure)
        assert failure.error.startswith("infrastructure:")
        assert f"node {host}" in failure.error and f"the {what} is not available" in failure.error
    assert "WASM Lean not installed" in got[1].error


def test_lean_files_on_ray_answer_like_local(tmp_path: Path) -> None:
    exe = fake_lean(tmp_path)

    def answers(executor) -> list:
        runner = NativeRunner(lean_path=str(exe), timeout=30, memory_mb=None,
                              work_dir=tmp_path / "work")
        be = LeanBackend(runner, executor=executor, tasks_per_file=1)
        task = lean_task()
        return be.evaluate_many([("classify", (task, [(1,), (-2,), (5,)])),
                                 ("compile", (task, None, None)),
                                 ("classify", (lean_task("toy_2"), [(0,), (7,)]))])

    remote = RayExecutor(memory_mb=SMALL_UNITS)  # the fake Lean needs no 4 GB
    assert answers(remote) == answers(None)
    assert remote.describe()["units"] >= 2 and remote.describe()["failed_units"] == 0


# ---------------------------------------------------------------- Coq on Ray

COQ_TASKS = ["verina_basic_1"]
COQ_CONFIG = {"seed": 7, "backend": "coq", "tasks": COQ_TASKS,
              "seeds": {"candidates_per_round": 8}, "mutation": {"max_mutations_per_input": 3},
              "adversaries": {"max_specs": 2, "max_adver_impl": 2},
              "report": {"time_evaluation": "off"}}


def coq_run(out: Path, executor: str) -> dict:
    config = RunConfig.model_validate({**COQ_CONFIG, "execution": {
        "executor": executor, "unit_memory_mb": SMALL_UNITS}})
    result = run_pipeline(DATA, out, config, report=False, cache=False)
    assert result.errors == {}
    import json

    return json.loads((out / "manifest.json").read_text())


@pytest.mark.coq
@pytest.mark.skipif(COQC is None, reason="coqc is not on PATH (apt-get install coq)")
@pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} is absent")
def test_coq_on_ray_gives_the_local_bytes_with_a_worker_killed(tmp_path: Path) -> None:
    """Each coqc file is one Ray unit; a worker killed mid-file is retried by Ray."""
    local = coq_run(tmp_path / "local", "local")
    assert local["execution"]["units"] == 0  # locally coqc runs in this process's pool
    killer = WorkerKiller()
    killer.start()
    try:
        there = coq_run(tmp_path / "ray", "ray")
    finally:
        killer.stop.set()
        killer.join()
    assert killer.killed, "no Ray worker was caught running a coqc file"
    assert there["execution"]["units"] > 0 and there["execution"]["failed_units"] == 0
    for suite in ("plus", "lite"):
        assert tree(tmp_path / "ray" / suite) == tree(tmp_path / "local" / suite)


def test_a_node_without_coqc_makes_the_checks_unknown(tmp_path: Path) -> None:
    """No coqc on the node: every check is UNKNOWN with the node named, never a FAIL."""
    from veriscale.backends.base import FailureKind, Implementation, Label, Verdict
    from veriscale.backends.coq.backend import CoqBackend
    from veriscale.backends.coq.runner import CoqcFile

    ex = RayExecutor(max_retries=0, memory_mb=SMALL_UNITS)
    (failure,) = ex.map(run_prover_file, [ProverFile(
        CoqcFile(str(tmp_path / "no-coqc"), timeout=10, memory_mb=512), "Check.v", "")])
    assert isinstance(failure, UnitFailure)
    assert failure.error.startswith(f"infrastructure: ray: run_prover_file failed after 1 "
                                    f"attempt(s): RetryableUnitError: node {socket.gethostname()}")
    assert "the coqc runner is not available here" in failure.error and "no-coqc" in failure.error
    other = tmp_path / "coqc"  # a node whose coqc is not the driver's version
    other.write_text("#!/bin/sh\necho 'The Coq Proof Assistant, version 9.9.1'\n")
    other.chmod(0o755)
    (refused,) = ex.map(run_prover_file, [ProverFile(
        CoqcFile(str(other), timeout=10, memory_mb=512), "Check.v", "",
        toolchain="The Coq Proof Assistant, version 8.16.1")])
    assert isinstance(refused, UnitFailure) and "install the same on every node" in refused.error

    task = coq_toy_task()
    be = CoqBackend(coqc=str(tmp_path / "no-coqc"), executor=ex)
    labels = be.classify(task, [(3,), (-1,)])
    assert [c.label for c in labels] == [Label.UNKNOWN, Label.UNKNOWN]
    assert all("not available here" in c.detail for c in labels)
    (outcomes,) = be.run_many([(task, Implementation("Definition inc (x : Z) : Z := x + 1."), [(3,)])])
    assert outcomes[0].kind is FailureKind.INFRASTRUCTURE and outcomes[0].kind.inconclusive
    assert be.postcondition_holds(task, None, [((3,), 4)]) == [Verdict.UNKNOWN]
    assert be.compile(task, Implementation("Definition inc (x : Z) : Z := x + 1.")).startswith("infrastructure:")


def coq_toy_task():
    from veriscale.backends.coq import format as F
    from veriscale.benchmark.model import ExpectedPair, Task

    sig = F.coq_signature({"name": "inc", "return_type": "Z", "parameters": [
        {"param_name": "x", "param_type": "Z"}]})
    sections = F.CoqSections(task_imports="Require Import ZArith.\nOpen Scope Z_scope.",
                             precond="0 <=? x", code="x + 1", postcond="result =? x + 1")
    sections = F.parse_coq_sections(F.render_task_v(sig, sections))
    return Task(id="inc", description="", signature=sig, sections={"coq": sections},
                tests=[ExpectedPair((3,), 4, [5])], reject_inputs=[(-1,)])


def test_the_candidate_budget_holds_per_batch_on_ray_as_locally() -> None:
    """``candidate_seconds`` cuts a batch on a Ray worker as the local pool cuts the
    same items: twelve 0.3 s tests under a 1 s budget cannot all run (at most four
    start before it ends); the rest report the budget spent."""
    from veriscale.backends.python.sandbox import Sandbox, SandboxLimits
    from veriscale.backends.python.units import call_many_on

    limits = SandboxLimits(timeout=5, candidate_seconds=1.0, memory_mb=256)
    source = "import time\ndef f(x):\n    time.sleep(0.3)\n    return x\n"
    items = [(i,) for i in range(12)]
    remote = call_many_on(RayExecutor(memory_mb=SMALL_UNITS), limits, 12, source, ["f"],
                          items, restricted=False)
    with Sandbox(workers=1, limits=limits, batch_size=12) as sb:
        local = sb.call_many(source, ["f"], [list(a) for a in items], restricted=False)
    for got in (remote, local):
        assert all(r.value == i for i, r in enumerate(got) if r.ok)
        assert sum(r.ok for r in got) <= 4
        spent = [r for r in got if not r.ok]
        assert spent and all(r.error.startswith("timeout: the candidate's time budget")
                             for r in spent)
