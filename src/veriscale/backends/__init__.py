"""Oracles: the backend interface (:mod:`veriscale.backends.base`), its dispatcher and
cache, and one folder per specification language (``lean/``, ``python/``, ``coq/``),
each with its language plug-in (:mod:`veriscale.backends.language`).

Import what you need from its module; this package re-exports nothing, so that a
language's codec can be imported without loading the backend interface."""
