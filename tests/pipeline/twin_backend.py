"""A real oracle for the bundled Lean tasks without Lean: their Python twins.

Every bundled Lean task has a Python-spec twin with the same id and signature
(src/veriscale/examples/bundled). :class:`TwinBackend` answers each protocol
call for a Lean task with the Python backend on its twin, so a whole
``veriscale run`` over VERINA-format tasks runs for real in the fast suite;
the adversaries are Python code (the provider is made for the Python backend).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from veriscale.backends.datasets import load_benchmark
from veriscale.backends.registry import make_backend
from veriscale.benchmark.model import Task


class TwinBackend:
    def __init__(self, bundled_python: Path, tasks: list[str] | None = None) -> None:
        twins, issues = load_benchmark(bundled_python, tasks)
        assert not issues, issues
        self.twins = {t.id: t for t in twins}
        self.inner = make_backend("python", workers=1)
        self.name = "python"
        self.stats = self.inner.stats

    def twin(self, task: Task) -> Task:
        return self.twins[task.id]

    def check_inputs(self, task, inputs):
        return self.inner.check_inputs(self.twin(task), inputs)

    def classify(self, task, inputs):
        return self.inner.classify(self.twin(task), inputs)

    def run(self, task, impl, inputs):
        return self.inner.run(self.twin(task), impl, inputs)

    def precondition_holds(self, task, spec, inputs):
        return self.inner.precondition_holds(self.twin(task), spec, inputs)

    def postcondition_holds(self, task, spec, pairs):
        return self.inner.postcondition_holds(self.twin(task), spec, pairs)

    def compile(self, task, impl=None, spec=None) -> Any:
        return self.inner.compile(self.twin(task), impl, spec)

    def close(self) -> None:
        self.inner.close()


def twin_run(bundled_lean: Path, bundled_python: Path, out: Path, tasks: list[str],
             **settings: Any):
    """``run_pipeline`` on the bundled Lean tasks with the twin oracle."""
    from rich.console import Console

    from veriscale.llm.provider import make_provider
    from veriscale.pipeline.config import RunConfig
    from veriscale.pipeline.run import run_pipeline

    config = RunConfig.model_validate({
        "seed": 3, "backend": "lean", "tasks": tasks,
        "seeds": {"candidates_per_round": 6},
        "mutation": {"max_mutations_per_input": 3, "max_candidates_per_task": 60},
        **settings,
    })
    provider = make_provider(config.llm, backend="python", seed=config.seed)
    backend = TwinBackend(bundled_python, tasks)
    return run_pipeline(bundled_lean, out, config, backend=backend, provider=provider,
                        console=Console(quiet=True))
