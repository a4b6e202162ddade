"""The ``veriscale`` command line.

Each command lives in its own module under :mod:`veriscale.commands` and is
imported only when used, so that ``veriscale --help`` stays fast and a broken
optional dependency breaks one command, not all.
"""

from __future__ import annotations

import importlib

import click

from veriscale import __version__

# name -> (module, one-line help). Order is the order shown by --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("veriscale.commands.run", "Expand and reduce a benchmark: Plus and Lite suites, report."),
    "expand": ("veriscale.commands.run", "Run the expansion stages only (Plus suite)."),
    "reduce": ("veriscale.commands.reduce", "Reduce a Plus suite to a Lite suite."),
    "audit": ("veriscale.commands.run", "Audit a benchmark's own ground truth: findings with witnesses."),
    "report": ("veriscale.commands.report", "Write the report of a run directory."),
    "evaluate": ("veriscale.commands.evaluate", "Score model outputs (or built-in mutants) on suites."),
    "mutants": ("veriscale.commands.mutants", "Write the built-in mutants as a solutions file (a weak model)."),
    "leaderboard": ("veriscale.commands.leaderboard", "Several models on several suites: scores, bounds, drops, ranks, plot, page."),
    "verify": ("veriscale.commands.verify", "Re-check a dataset's suite against its own ground truth."),
    "validate": ("veriscale.commands.validate", "Statically lint a VERINA-format dataset."),
    "stats": ("veriscale.commands.stats", "Print Table 1 volume figures of a dataset."),
    "coverage": ("veriscale.commands.coverage", "Code coverage of the ground truth by each suite's tests."),
    "port": ("veriscale.commands.port", "Carry a suite onto another language's twin tasks, audited."),
    "mutate": ("veriscale.commands.mutate", "Show the type-aware mutants of one value."),
    "lean": ("veriscale.commands.lean", "Manage Lean runners (e.g. install the WASM Lean)."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module_name, _ = COMMANDS[cmd_name]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            raise
        cmd = getattr(module, f"{cmd_name}_command", None) or getattr(module, "command", None)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup)
@click.version_option(__version__, prog_name="veriscale")
def main() -> None:
    """VeriScale: adversarially strong, then compact, test suites for verifiable
    code generation benchmarks (VERINA in Lean 4, and Python-spec benchmarks)."""


if __name__ == "__main__":  # pragma: no cover
    main()
