"""The execution layer without Ray: the local executor, settings, and how backends
turn a unit that produced nothing into UNKNOWN answers (never a crash, never a pass)."""

from __future__ import annotations

from pathlib import Path

import pytest
from exec_helpers import fake_lean, lean_task

from veriscale.backends.base import Label, Verdict
from veriscale.backends.lean.backend import LeanBackend
from veriscale.backends.lean.runner import NativeRunner
from veriscale.backends.python.backend import PythonBackend
from veriscale.backends.python.sandbox import Sandbox, SandboxLimits
from veriscale.backends.python.units import call_many_on
from veriscale.benchmark.model import ExpectedPair, Signature, Task
from veriscale.execution import (
    LocalExecutor,
    UnitFailure,
    concurrent_map,
    is_remote,
    make_executor,
)
from veriscale.execution.settings import ExecutionSettings
from veriscale.execution.units import ProverFile, run_prover_file
from veriscale.pipeline.config import RunConfig


class BrokenCluster(LocalExecutor):
    """An executor whose every unit is lost (what Ray reports once retries run out)."""

    name = "broken"
    remote = True

    def map(self, fn, payloads, *, resources=None, parallelism=None):
        return [UnitFailure("infrastructure: ray: worker lost 4 time(s)") for _ in payloads]


def _parity(n: int) -> bool:
    if n == 3:
        raise ValueError("three")
    return n % 2 == 0


def test_local_map_keeps_order_and_isolates_a_failing_unit() -> None:
    ex = LocalExecutor()
    got = ex.map(_parity, [1, 2, 3, 4], parallelism=3)
    assert got[0] is False and got[1] is True and got[3] is True
    assert isinstance(got[2], UnitFailure)
    assert got[2].error == "infrastructure: ValueError: three"
    assert ex.describe() == {"executor": "local", "units": 4, "failed_units": 1}
    assert ex.width(4, 2) == 2 and ex.width(1, 9) == 1
    assert not is_remote(ex) and not is_remote(None)


def test_concurrent_map_returns_values_and_exceptions_in_order() -> None:
    got = concurrent_map("backend", lambda item, b: 10 // item, [5, 0, 2], width=2)
    assert got[0] == 2 and isinstance(got[1], ZeroDivisionError) and got[2] == 5


def test_settings_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    base = ExecutionSettings()
    assert base.resolved().executor == "local" and base.resolved().address is None
    assert base.resolved(address="10.0.0.1:6379").executor == "ray"  # an address implies Ray
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")
    assert base.resolved("ray").address == "head:6379"
    assert ExecutionSettings(address="cfg:1").resolved("ray").address == "cfg:1"
    assert base.resolved("ray", "cli:2").address == "cli:2"
    with pytest.raises(ValueError):
        make_executor("dask")


def test_execution_section_is_in_no_stage_fingerprint() -> None:
    local = RunConfig()
    remote = RunConfig.model_validate({"execution": {"executor": "ray", "address": "h:1"}})
    for sections in (("backend", "backend_options"), ("seed", "llm", "seeds", "mutation"),
                     ("seed", "llm", "adversaries", "backend"), ("reduction",)):
        assert local.fingerprint(*sections) == remote.fingerprint(*sections)


SOURCE = "def f(x):\n    return x * 2\n\ndef reference(x):\n    return f(x)\n"


def test_sandbox_batches_as_units_answer_like_the_pool() -> None:
    limits = SandboxLimits(timeout=2.0)
    items = [[k] for k in range(7)]
    with Sandbox(workers=1, limits=limits, batch_size=3) as sb:
        direct = sb.call_many(SOURCE, ["f"], items)
    units = call_many_on(LocalExecutor(), limits, 3, SOURCE, ["f"], items, restricted=True)
    assert [(r.ok, r.value, r.error) for r in units] == \
        [(r.ok, r.value, r.error) for r in direct]
    assert [r.value for r in units] == [2 * k for k in range(7)]


def _py_task() -> Task:
    from veriscale.backends.python.sections import PythonSections

    sig = Signature.from_json({"name": "f", "parameters": [{"param_name": "x",
                                                           "param_type": "Int"}],
                               "return_type": "Int"})
    py = PythonSections(precondition="def precondition(x):\n    return x > 0\n",
                        reference="def reference(x):\n    return 2 * x\n",
                        postcondition="def postcondition(x, result):\n    return result == 2 * x\n")
    return Task("t1", "double", sig, tests=[ExpectedPair((3,), 6, [5])], sections={"python": py})


def test_lost_sandbox_batches_are_unknown_for_the_python_backend() -> None:
    task = _py_task()
    with PythonBackend(workers=1, executor=BrokenCluster()) as be:
        outs = be.run(task, None, [(1,), (2,)])
        cls = be.classify(task, [(1,), (-1,)])
        post = be.postcondition_holds(task, None, [((1,), 2)])
    assert all(not o.ok and o.error.startswith("infrastructure:") for o in outs)
    assert [c.label for c in cls] == [Label.UNKNOWN, Label.UNKNOWN]
    assert post == [Verdict.UNKNOWN]


def test_lost_lean_files_are_unknown_and_not_retried_as_crashes(tmp_path: Path) -> None:
    runner = NativeRunner(lean_path=str(fake_lean(tmp_path)), timeout=30, memory_mb=None,
                          work_dir=tmp_path / "work")
    be = LeanBackend(runner, executor=BrokenCluster())
    cls, run = be.evaluate_many([("classify", (lean_task(), [(1,), (-2,)])),
                                 ("run", (lean_task(), None, [(4,)]))])
    assert [c.label for c in cls] == [Label.UNKNOWN, Label.UNKNOWN]
    assert all(c.detail.startswith("infrastructure:") for c in cls)
    assert not run[0].ok and run[0].error.startswith("infrastructure:")
    assert be.stats.extra["files"] == 1  # one unit, reported once, no crash retries


def test_a_prover_file_runs_locally_in_the_runner_work_dir(tmp_path: Path) -> None:
    runner = NativeRunner(lean_path=str(fake_lean(tmp_path)), timeout=30, memory_mb=None,
                          work_dir=tmp_path / "work")
    text = "#check Nat\n"
    res = run_prover_file(ProverFile(runner, "one.lean", text, keep=True))
    assert [m.text for m in res.messages] == ["ok"]
    assert (tmp_path / "work" / "one.lean").read_text() == text
    run_prover_file(ProverFile(runner, "two.lean", text))
    assert not (tmp_path / "work" / "two.lean").exists()


class TextRunner:
    """A runner that takes the text itself (how a ``coqc`` runner plugs in)."""

    name = "text"

    def run_text(self, name: str, text: str) -> tuple[str, int]:
        return name, len(text)


def test_a_text_runner_gets_the_text() -> None:
    assert run_prover_file(ProverFile(TextRunner(), "Check.v", "Compute 1.\n")) == ("Check.v", 11)


def test_every_command_takes_execution_from_flags_env_and_config(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bundled_dir: Path) -> None:
    """run, expand, verify and evaluate resolve ``--executor``/``--ray-address``,
    ``[execution]`` of ``--config`` and RAY_ADDRESS the same way (one resolution)."""
    from click.testing import CliRunner

    import veriscale.commands.evaluate as evaluate_cmd
    import veriscale.evaluation.verify as verify_mod
    import veriscale.pipeline.run as run_mod
    from veriscale.backends.datasets import NotADataset
    from veriscale.cli import main
    from veriscale.rundir import RunDirLocked

    made: list[ExecutionSettings] = []

    def make(self: ExecutionSettings) -> LocalExecutor:  # records, never starts Ray
        made.append(self)
        return LocalExecutor()

    def no_run(benchmark, out, config, **kw):
        config.execution.make()
        raise RunDirLocked("stop here")

    def no_verify(*args, executor=None, **kw):
        raise NotADataset("stop here")

    monkeypatch.setattr(ExecutionSettings, "make", make)
    monkeypatch.setattr(run_mod, "run_pipeline", no_run)
    monkeypatch.setattr(verify_mod, "verify_dataset", no_verify)
    monkeypatch.setattr(evaluate_cmd, "_run_mutants", lambda *a, **k: None)
    monkeypatch.setenv("RAY_ADDRESS", "env:3")
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('[execution]\nexecutor = "ray"\naddress = "cfg:1"\nmax_retries = 5\n')
    data = str(bundled_dir)
    commands = {
        "run": ["run", data, "--out", str(tmp_path / "r")],
        "expand": ["expand", data, "--out", str(tmp_path / "e")],
        "verify": ["verify", data],
        "evaluate": ["evaluate", "--mutants", data, "--task", "vs_argmax"],
    }
    for name, args in commands.items():
        for extra, want in (([], ("ray", "cfg:1", 5)),
                            (["--executor", "local"], ("local", "cfg:1", 5)),
                            (["--ray-address", "cli:2"], ("ray", "cli:2", 5))):
            made.clear()
            res = CliRunner().invoke(main, [*args, "--config", str(cfg), *extra])
            assert res.exit_code in (0, 2, 3), (name, res.output)
            assert made, (name, res.output)
            got = {(s.executor, s.address, s.max_retries) for s in made}
            assert got == {want}, (name, extra, got)
        made.clear()  # no config: the address comes from RAY_ADDRESS, the executor is local
        res = CliRunner().invoke(main, args)
        assert {(s.executor, s.address) for s in made} == {("local", "env:3")}, name
    bad = tmp_path / "bad.toml"
    bad.write_text('[execution]\nexecutor = "dask"\n')
    for name in ("verify", "evaluate"):
        res = CliRunner().invoke(main, [*commands[name], "--config", str(bad)])
        assert res.exit_code != 0 and "bad.toml" in res.output and "executor" in res.output


def _fake_wasm_install(root: Path) -> Path:
    from veriscale.backends.lean import wasm_setup

    inst = wasm_setup.WasmInstall(root)
    for f in (inst.node, inst.lean_js, root / ".veriscale-complete"):
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("")
    assert inst.complete
    return root


def test_runners_are_set_up_on_the_worker_not_taken_from_the_driver(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a remote unit runs with is looked up on its node (``on_worker``): the
    driver's resolved WASM install, lean or coqc path is never assumed there."""
    from veriscale.backends.coq.runner import CoqcFile, CoqUnavailable
    from veriscale.backends.lean.runner import WasmRunner
    from veriscale.backends.lean.wasm_setup import ENV_DIR, WasmSetupError

    driver_dir = _fake_wasm_install(tmp_path / "driver")
    monkeypatch.setenv(ENV_DIR, str(driver_dir))
    runner = WasmRunner(auto_install=False)
    assert runner.install().root == driver_dir  # resolved on the driver
    node_dir = _fake_wasm_install(tmp_path / "node")
    monkeypatch.setenv(ENV_DIR, str(node_dir))  # the worker's node keeps it elsewhere
    assert runner.on_worker().install().root == node_dir
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "nothing"))
    with pytest.raises(WasmSetupError, match="WASM Lean not installed"):
        runner.on_worker()
    with pytest.raises(CoqUnavailable, match="not on PATH"):
        CoqcFile(str(tmp_path / "no-coqc"), 10, 512).on_worker()
    exe = fake_lean(tmp_path)  # any executable stands for coqc; QuickChick is looked up
    with pytest.raises(CoqUnavailable, match="QuickChick is not installed"):
        CoqcFile.for_source("From QuickChick Require Import QuickChick.", str(exe), 10,
                            512).on_worker()
    assert CoqcFile.for_source("Require Import ZArith.", str(exe), 10, 512).on_worker()


def test_a_node_with_another_prover_version_refuses_the_unit(tmp_path: Path) -> None:
    """The oracle cache files answers under the driver's toolchain: a node whose
    prover is another version must not answer under that name."""
    from veriscale.backends.coq.backend import CoqBackend
    from veriscale.backends.coq.runner import CoqcFile
    from veriscale.execution.units import UnitError, _ready_runner

    coqc = tmp_path / "coqc"
    coqc.write_text("#!/bin/sh\necho 'The Coq Proof Assistant, version 9.9.1'\n"
                    "echo 'compiled with OCaml 4.14.1'\n")
    coqc.chmod(0o755)
    here = CoqcFile(str(coqc), 10, 512)
    assert here.identity() == "The Coq Proof Assistant, version 9.9.1"
    assert CoqBackend(coqc=str(coqc)).identity() == here.identity()
    assert _ready_runner(here, here.identity()) is here
    assert _ready_runner(here, "") is here  # nothing named: nothing to compare
    with pytest.raises(UnitError, match=r"runner here is 'The Coq .*9\.9\.1' but the driver's "
                                        r"is 'The Coq Proof Assistant, version 8\.16\.1'"):
        _ready_runner(here, "The Coq Proof Assistant, version 8.16.1")
