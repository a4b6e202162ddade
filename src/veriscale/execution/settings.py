"""The ``[execution]`` config section (its command-line options live in
:mod:`veriscale.commands.execution_options`).

Where units run never changes what they answer, so this section is left out
of every stage fingerprint: a run resumed under another executor reuses its
artifacts.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from veriscale.execution import Executor, make_executor


class ExecutionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executor: Literal["local", "ray"] = Field(
        "local", description="local: this machine's pools; ray: a Ray cluster")
    address: str | None = Field(
        None, description="Ray cluster address (default: RAY_ADDRESS, else a new local Ray)")
    max_retries: int = Field(3, ge=0, description="Ray retries of a unit whose worker died")
    unit_memory_mb: int | None = Field(
        None, ge=1, description="memory declared per unit, overriding the backend's figure "
        "(Lean ~4096, a sandbox batch its memory limit + 256)")
    concurrent_tasks: int = Field(
        16, ge=1, description="tasks whose oracle calls are in flight at once on a remote "
        "executor (backends without cross-task batching)")

    def resolved(self, executor: str | None = None, address: str | None = None
                 ) -> ExecutionSettings:
        """These settings with command-line choices applied; ``--ray-address`` implies Ray."""
        data = self.model_dump()
        if address:
            data["address"] = address
            data["executor"] = executor or "ray"
        elif executor:
            data["executor"] = executor
        if data["address"] is None:
            data["address"] = os.environ.get("RAY_ADDRESS") or None
        return ExecutionSettings.model_validate(data)

    def make(self) -> Executor:
        return make_executor(self.executor, address=self.address, max_retries=self.max_retries,
                             memory_mb=self.unit_memory_mb)
