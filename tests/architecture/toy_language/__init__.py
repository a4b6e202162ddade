"""A toy fourth specification language, registered from the test folder: integer
expressions over the parameters, evaluated by a small interpreter (no Python ``eval``).

A task folder holds ``task.json`` (id, signature), ``description.txt``, ``task.expr``
(three sections, ``@precond`` / ``@code`` / ``@postcond``, one expression each; the
postcondition sees ``result``) and VERINA's ``test.json`` / ``reject_inputs.json``.
"""
