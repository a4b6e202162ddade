"""Input and adversary expansion (paper §3.1).

Modules are imported by name (``veriscale.expansion.mutation``,
``veriscale.expansion.seeds``, ...) so that each stays independent.
"""
