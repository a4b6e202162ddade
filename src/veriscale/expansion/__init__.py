"""Input and adversary expansion (paper §3.1).

Modules are imported by name (``veriscale.expansion.mutation``,
``veriscale.expansion.adversarial``) so that each stays independent; the
offline boundary seeds are ``veriscale.values.boundaries``.
"""
