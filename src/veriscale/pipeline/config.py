"""Run configuration: every knob of the pipeline, with the paper's Table 3 defaults.

One ``seed`` drives every random choice (seed generation, mutation, offline
adversaries), so a run is reproducible from its config alone. The config is
written into the run manifest and fingerprinted, so a resumed run notices
when its stage artifacts were made under other settings.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from veriscale.execution.settings import ExecutionSettings
from veriscale.expansion.adversarial import AdversarySettings
from veriscale.reduction.pairs import KEEP_ORIGINAL, MAX_PAIRS_PER_TASK
from veriscale.reduction.reject_inputs import KEEP_PER_CRITICAL_BUCKET, KEEP_REJECT_INPUTS_PER_TASK


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SeedSettings(_Section):
    rounds: int = Field(1, ge=0, description="LLM seed-generation rounds per task")
    candidates_per_round: int = Field(40, ge=0, description="candidates asked for per round")
    example_limit: int = Field(5, ge=0, description="examples of each kind shown in the prompt")


class MutationSettings(_Section):
    max_mutations_per_input: int = Field(15, ge=0)
    multi_step_size: int = Field(5, ge=1)
    ingredient_prob: float = Field(0.3, ge=0.0, le=1.0)
    max_candidates_per_task: int = Field(
        3000, ge=1, description="cap on candidate inputs per task after mutation"
    )


class ReductionSettings(_Section):
    """Lite's budgets; the defaults are the reduction algorithms' own (one owner each)."""

    max_reject_inputs: int = Field(KEEP_REJECT_INPUTS_PER_TASK, ge=0)
    keep_per_critical_bucket: int = Field(KEEP_PER_CRITICAL_BUCKET, ge=1)
    max_pairs: int = Field(MAX_PAIRS_PER_TASK, ge=0)
    keep_original: bool = Field(
        KEEP_ORIGINAL,
        description="keep every original benchmark row in Lite and spend the rest of the "
        "budget by set cover (the released VerinaLite holds every VERINA row too); "
        "without it Lite can miss mistakes the original tests catch",
    )


class SuiteSettings(_Section):
    require_gt_postcondition: bool = Field(
        True,
        description="keep an expected pair only if the GT postcondition does not reject "
        "the reference's output (one more oracle round; the rejected pairs, where the "
        "task's code and specification disagree, are listed per task in outputs.json)",
    )
    keep_nonkilling_pairs: bool = Field(
        True,
        description="keep expected pairs no adversary kills in Plus (the authors dropped "
        "them; they still test CodeGen and postcondition completeness)",
    )


class ReportSettings(_Section):
    time_evaluation: str = Field(
        "auto",
        description="time a ground-truth evaluation on original / Plus / Lite for the "
        "report's Table 2: on, off, or auto (on for the Python backend; on Lean and Coq it "
        "costs one more evaluation of each suite: about a third of a Coq run)",
        pattern="^(auto|on|off)$",
    )


class AuditSettings(_Section):
    accept_multiple: list[str] = Field(
        default_factory=list,
        description="tasks whose several valid answers a maintainer has judged: their "
        "ground-truth audit findings are listed apart (accepted_multiple), not flagged")


class RunConfig(_Section):
    seed: int = 42
    backend: str | None = Field(
        None, description="oracle backend (python, lean); unset: detected from the benchmark "
        "(python for Python-spec tasks, lean for VERINA tasks)",
    )
    backend_options: dict[str, Any] = Field(default_factory=dict)
    sandbox: str = Field(
        "auto",
        description="OS isolation of untrusted code: auto (bubblewrap when it works, else "
        "a warning), os (refuse to run without it), none (off)",
        pattern="^(auto|os|none)$",
    )
    llm: dict[str, Any] = Field(
        default_factory=lambda: {"provider": "offline"},
        description="LLM provider settings; see veriscale.llm.config",
    )
    tasks: list[str] | None = None
    seeds: SeedSettings = Field(default_factory=SeedSettings)
    mutation: MutationSettings = Field(default_factory=MutationSettings)
    adversaries: AdversarySettings = Field(default_factory=AdversarySettings)
    reduction: ReductionSettings = Field(default_factory=ReductionSettings)
    suite: SuiteSettings = Field(default_factory=SuiteSettings)
    report: ReportSettings = Field(default_factory=ReportSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    execution: ExecutionSettings = Field(default_factory=ExecutionSettings)

    def fingerprint(self, *sections: str) -> str:
        """A short hash of the named sections (all when none), for stage invalidation.

        A name may be dotted (``adversaries.max_specs``) to take one knob of a
        section, so a stage is redone only when a knob it reads changed.
        """
        data = self.model_dump(mode="json")
        if sections:
            picked: dict[str, Any] = {}
            for name in sections:
                head, _, knob = name.partition(".")
                picked[name] = data[head][knob] if knob else data[head]
            data = picked
        blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def detect_backend(benchmark_dir: Path, tasks: list[str] | None = None) -> str:
    """The backend a benchmark's own format needs: that of the one language plug-in
    whose format every (selected) task folder is in; the default language's otherwise."""
    from veriscale.backends.datasets import task_dirs
    from veriscale.backends.language import DEFAULT_LANGUAGE, plugin_for, plugin_for_dir

    dirs = [d for d in task_dirs(benchmark_dir) if not tasks or d.name in tasks]
    owners = {plugin_for_dir(d).name for d in dirs}
    return plugin_for(owners.pop() if len(owners) == 1 else DEFAULT_LANGUAGE).backend


def resolve_backend(config: RunConfig, benchmark_dir: Path) -> RunConfig:
    """``config`` with its backend named: the config's own, else detected."""
    if config.backend is not None:
        return config
    return config.model_copy(update={"backend": detect_backend(benchmark_dir, config.tasks)})


def load_config(path: Path | None, **overrides: Any) -> RunConfig:
    """Read a TOML or JSON config file (if given) and apply command-line overrides."""
    data: dict[str, Any] = {}
    if path is not None:
        text = Path(path).read_text(encoding="utf-8")
        data = json.loads(text) if Path(path).suffix == ".json" else tomllib.loads(text)
    for key, value in overrides.items():
        if value is not None:
            data[key] = value
    return RunConfig.model_validate(data)
