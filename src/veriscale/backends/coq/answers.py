"""Reading an LLM's Coq answers: specifications and adversarial implementations."""

from __future__ import annotations

import re
from typing import Any

from veriscale.benchmark.model import Task

# ---------------------------------------------------------------- LLM answers

SPEC_PRE = "(* Precondition Implementation *)"
SPEC_POST = "(* Postcondition Implementation *)"
ADVERSARY = "(* Adversarial Implementation"


def precond_header(task: Task) -> str:
    sig = task.signature
    binders = " ".join(f"({p.name} : {p.type_text})" for p in sig.params)
    return f"Definition {sig.name}_precond {binders} : bool :="


def postcond_header(task: Task) -> str:
    sig = task.signature
    binders = " ".join(f"({p.name} : {p.type_text})" for p in sig.params)
    return f"Definition {sig.name}_postcond {binders} (result : {sig.return_text}) : bool :="


def _coq_code(text: str) -> str:

    blocks = re.findall(r"```(?:coq|rocq|v)?[^\n]*\n(.*?)```", text, re.S)
    return "\n".join(blocks) if blocks else text


def _definition_body(sentence_text: str) -> str | None:
    """The body after the top-level ``:=`` of a ``Definition``."""
    depth = 0
    for i, c in enumerate(sentence_text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and sentence_text.startswith(":=", i):
            return sentence_text[i + 2:].strip()
    return None


def parse_spec_answer(text: str, task: Task, origin: str = "") -> Any:
    """A candidate spec from a model's Coq answer: the bodies of ``F_precond`` and
    ``F_postcond`` (parameter names as in the task) and the helpers before each."""
    from veriscale.backends.answers import ParseError
    from veriscale.backends.base import Spec
    from veriscale.backends.coq.lexer import sentences

    name = task.signature.name
    items = sentences(_coq_code(text))
    pre_i = next((i for i, s in enumerate(items) if s.words[:2] == ("Definition",
                                                                   f"{name}_precond")), -1)
    post_i = next((i for i, s in enumerate(items) if s.words[:2] == ("Definition",
                                                                    f"{name}_postcond")), -1)
    if post_i < 0:
        raise ParseError(f"no definition of {name}_postcond")
    if pre_i > post_i:
        raise ParseError(f"{name}_precond is defined after {name}_postcond")
    helpers = [i for i, s in enumerate(items) if i not in (pre_i, post_i)
               and s.words[:1] and s.words[0] in ("Definition", "Fixpoint")]
    pre_body = _definition_body(items[pre_i].text) if pre_i >= 0 else None
    post_body = _definition_body(items[post_i].text)
    if post_body is None:
        raise ParseError(f"{name}_postcond has no body")
    pre_aux = "\n\n".join(items[i].raw for i in helpers if i < pre_i)
    post_aux = "\n\n".join(items[i].raw for i in helpers if max(pre_i, -1) < i < post_i)
    spec = Spec(precond=pre_body, postcond=post_body, precond_aux=pre_aux,
                postcond_aux=post_aux, origin=origin)
    from veriscale.backends.answers import spec_id

    return Spec(precond=spec.precond, postcond=spec.postcond, precond_aux=spec.precond_aux,
                postcond_aux=spec.postcond_aux, id=spec_id(spec), origin=origin)


def parse_adversary_answer(text: str, task: Task, origin: str = "", target_spec: str = ""
                           ) -> tuple[list[Any], list[str]]:
    """Implementations from a red-team answer: each chunk after a marker must define
    ``F<i>`` (renamed to ``F``); returns (implementations, reasons for rejected chunks)."""

    from veriscale.backends.answers import adversary_id
    from veriscale.backends.base import Implementation

    name = task.signature.name
    code = _coq_code(text)
    chunks = [c for c in re.split(r"\(\*\s*Adversarial Implementation\s*\d*\s*\*\)", code)
              if c.strip()]
    out, rejected = [], []
    for k, chunk in enumerate(chunks, start=1):
        m = re.search(rf"\b(?:Definition|Fixpoint)\s+({re.escape(name)}\d*)\b", chunk)
        if m is None:
            rejected.append(f"chunk {k}: no definition of {name}<i>")
            continue
        renamed = re.sub(rf"\b{re.escape(m.group(1))}\b", name, chunk).strip()
        out.append(Implementation(code=renamed, id=adversary_id(renamed),
                                  strategy=f"llm:{k}", origin=origin, target_spec=target_spec))
    return out, rejected
