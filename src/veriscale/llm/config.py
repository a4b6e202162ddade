"""LLM settings: which model plays which role, where it lives, and what it costs.

Roles follow the paper's expansion stage: ``seeds`` (candidate inputs),
``decompose`` (problem decomposition), ``spec`` (specification generation; a
list of models, for diversity) and ``redteam`` (adversarial implementations).
Every role may name its own OpenAI-compatible endpoint; API keys are read from
the environment variable the config names, so no key is ever written to a
config file, a cache or a run manifest.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

ROLES = ("seeds", "decompose", "spec", "redteam")
"""The roles, in pipeline order."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


TRANSPORT_FIELDS = frozenset({
    "base_url", "api_key_env", "extra_headers", "concurrency", "timeout", "request_deadline",
    "max_attempts", "backoff_initial", "backoff_max", "max_consecutive_failures", "prices",
    "cache", "fallback",
})
"""Settings that decide how an answer is fetched, never what it is: they stay out of
stage fingerprints, so changing them recomputes nothing (the cache answers)."""


class Endpoint(_Model):
    """One model at one endpoint; unset fields inherit from :class:`LLMConfig`.

    ``max_tokens`` and ``max_completion_tokens`` are sent under their own names:
    reasoning models reject the first and want the second.
    """

    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    reasoning_effort: str | None = None
    seed: int | None = None
    extra_headers: dict[str, str] = Field(default_factory=dict)
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @property
    def token_limit(self) -> tuple[str, int] | None:
        """(parameter name, value) of the completion budget sent, if any."""
        if self.max_completion_tokens is not None:
            return "max_completion_tokens", self.max_completion_tokens
        if self.max_tokens is not None:
            return "max_tokens", self.max_tokens
        return None


class Price(_Model):
    """US dollars per million tokens."""

    input: float = Field(0.0, ge=0.0)
    output: float = Field(0.0, ge=0.0)


class LLMConfig(_Model):
    """Everything the LLM layer needs; ``provider="auto"`` is offline unless a role has a model."""

    provider: Literal["auto", "offline", "openai"] = "auto"
    base_url: str | None = Field(None, description="default endpoint for every role")
    api_key_env: str = Field("OPENAI_API_KEY", description="environment variable holding the key")
    temperature: float | None = Field(None, description="default sampling temperature")
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    reasoning_effort: str | None = Field(None, description='e.g. "low", "medium", "high"')
    seed: int | None = Field(None, description="request seed sent to endpoints that honour it")
    extra_headers: dict[str, str] = Field(default_factory=dict, description="sent with every request")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="merged into every body")
    roles: dict[str, list[Endpoint]] = Field(default_factory=dict)
    concurrency: int = Field(4, ge=1, description="requests in flight for the whole run")
    timeout: float = Field(300.0, gt=0, description="seconds per HTTP attempt")
    request_deadline: float = Field(
        900.0, gt=0, description="seconds per request, all retries and waits included")
    max_attempts: int = Field(8, ge=1, description="tries per request on transient errors")
    backoff_initial: float = Field(1.0, ge=0.0, description="first backoff delay (s)")
    backoff_max: float = Field(60.0, ge=0.0)
    max_consecutive_failures: int = Field(
        3, ge=1, description="an endpoint whose first N requests all fail stops the run")
    parse_attempts: int = Field(
        3, ge=1, description="paid asks per answer: the first plus re-asks after an unusable, "
        "truncated or empty answer (each re-ask changes the request)")
    fallback: Literal["stop", "offline"] = Field(
        "stop", description="when the endpoint is unusable (auth, missing model, every request "
        "failing): stop the run, or continue offline (said loudly; nothing is stored as final)")
    prices: dict[str, Price] = Field(default_factory=dict, description="per model name")
    cache: bool = True
    fallback_offline: bool = Field(
        True,
        description="use the GT-derived flawed specs / offline adversaries when the LLM "
        "produces none for a task (the paper's constraint-dropping fallback)",
    )

    @field_validator("roles", mode="before")
    @classmethod
    def _roles(cls, value: Any) -> Any:
        """Accept ``{"spec": "gpt-x"}`` or ``{"spec": {"model": ...}}`` shorthands."""
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        for role, spec in value.items():
            if role not in ROLES:
                raise ValueError(f"unknown LLM role {role!r}; roles are {', '.join(ROLES)}")
            items = spec if isinstance(spec, list) else [spec]
            out[role] = [{"model": s} if isinstance(s, str) else s for s in items]
        return out

    @property
    def offline(self) -> bool:
        if self.provider == "offline":
            return True
        if self.provider == "openai":
            return False
        return not any(self.roles.get(r) for r in ROLES)

    def endpoints(self, role: str) -> list[Endpoint]:
        """The role's models with defaults filled in (a role without models borrows
        the first model of any other role, so one model name is enough to run)."""
        items = self.roles.get(role) or next(
            (self.roles[r][:1] for r in ROLES if self.roles.get(r)), []
        )
        return [
            Endpoint(
                model=e.model,
                base_url=e.base_url if e.base_url is not None else self.base_url,
                api_key_env=e.api_key_env or self.api_key_env,
                temperature=e.temperature if e.temperature is not None else self.temperature,
                max_tokens=e.max_tokens if e.max_tokens is not None else self.max_tokens,
                max_completion_tokens=(e.max_completion_tokens if e.max_completion_tokens
                                       is not None else self.max_completion_tokens),
                reasoning_effort=e.reasoning_effort or self.reasoning_effort,
                seed=e.seed if e.seed is not None else self.seed,
                extra_headers={**self.extra_headers, **e.extra_headers},
                extra_body={**self.extra_body, **e.extra_body},
            )
            for e in items
        ]

    def result_settings(self) -> dict[str, Any]:
        """The part of the config that can change an answer (for stage fingerprints):
        models, sampling, budgets, prompts-affecting knobs; never transport."""
        data = self.model_dump(mode="json")
        out = {k: v for k, v in data.items() if k not in TRANSPORT_FIELDS}
        out["roles"] = {
            role: [{k: v for k, v in e.items() if k not in TRANSPORT_FIELDS} for e in eps]
            for role, eps in data["roles"].items()
        }
        out["offline"] = self.offline
        return out

    def priced(self, model: str) -> bool:
        return model in self.prices

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        price = self.prices.get(model)
        if price is None:
            return 0.0
        return (prompt_tokens * price.input + completion_tokens * price.output) / 1e6


def load_llm_config(data: dict[str, Any] | LLMConfig | None) -> LLMConfig:
    """Validate the ``llm`` section of a run config (a dict) into :class:`LLMConfig`."""
    if isinstance(data, LLMConfig):
        return data
    return LLMConfig.model_validate(data or {})
