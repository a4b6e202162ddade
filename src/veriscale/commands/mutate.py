"""``veriscale mutate``: show the type-aware mutants of one value.

A debugging and teaching aid for the mutation rules (paper Appendix A): give a
type and a value in VERINA JSON encoding and see what the mutation stage would
make of it.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import click

from veriscale.benchmark.verina.codec import decode, encode
from veriscale.values import Opaque, TypeParseError, ValueError_, ValueType, parse_type


def parse_value(t: ValueType, text: str) -> Any:
    """VALUE as VERINA JSON when it is valid JSON, else as the raw VERINA string
    (``#[1, 2]``, ``hello``, ``'a'``); the first reading that fits ``t`` wins."""
    readings: list[Any] = []
    with contextlib.suppress(json.JSONDecodeError):
        readings.append(json.loads(text))
    readings.append(text)
    errors: list[str] = []
    for raw in readings:
        try:
            return decode(t, raw)
        except (ValueError_, ValueError) as exc:
            errors.append(str(exc))
    raise click.BadParameter(
        f"{text!r} is not a value of type {t}: {errors[-1] if errors else 'no reading'}",
        param_hint="--value",
    )


@click.command("mutate")
@click.option("--type", "type_text", required=True, help="Lean type, e.g. 'List Int'.")
@click.option("--value", "value_text", required=True,
              help="Value in VERINA JSON encoding: [1,2], 5, \"#[1, 2]\", or a raw string.")
@click.option("--n", "n", type=click.IntRange(min=1), default=15, show_default=True,
              help="Number of distinct mutants to print (fewer if the type has fewer).")
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("--steps", type=click.IntRange(min=1), default=5, show_default=True,
              help="Maximum consecutive mutation steps per mutant.")
@click.option("--ingredient-prob", type=click.FloatRange(0.0, 1.0), default=0.3,
              show_default=True, help="Probability of reusing a seen value instead of a schema.")
@click.option("--trace", is_flag=True, help="Also print the schema steps of each mutant.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list instead of lines.")
def mutate_command(
    type_text: str,
    value_text: str,
    n: int,
    seed: int,
    steps: int,
    ingredient_prob: float,
    trace: bool,
    as_json: bool,
) -> None:
    """Print N distinct type-aware mutants of VALUE (one VERINA JSON value per line)."""
    from veriscale.expansion.mutation import MutationConfig, mutate_inputs_traced

    try:
        t = parse_type(type_text)
    except TypeParseError as exc:
        raise click.BadParameter(str(exc), param_hint="--type") from exc
    value = parse_value(t, value_text)
    if isinstance(t, Opaque):
        click.echo(f"note: type {t} is not modelled; it has no mutation schemas", err=True)
    config = MutationConfig(
        max_mutations_per_input=n,
        multi_step_size=steps,
        ingredient_prob=ingredient_prob,
        seed=seed,
    )
    run = mutate_inputs_traced((t,), [(value,)], config)
    rows = [
        (encode(t, m.input[0]), " ; ".join(str(step) for _, step in m.steps)) for m in run.mutants
    ]
    if as_json:
        payload: list[Any] = (
            [{"value": v, "steps": s} for v, s in rows] if trace else [v for v, _ in rows]
        )
        click.echo(json.dumps(payload, ensure_ascii=False))
        return
    for v, s in rows:
        line = json.dumps(v, ensure_ascii=False)
        click.echo(f"{line}\t{s}" if trace else line)
