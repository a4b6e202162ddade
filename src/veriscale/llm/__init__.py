"""The LLM layer: OpenAI-compatible client, response cache, prompts, parsers, providers.

Entry point: :func:`veriscale.llm.provider.make_provider` returns the offline
provider unless an endpoint is configured; both providers implement the role
API of :class:`veriscale.llm.provider.Provider`.
"""
