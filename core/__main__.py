"""Command line: ``python -m core <command>``. Each module in core/studio/cli with ``register`` adds a command."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import core.studio.cli
from core.engine.llm.endpoint import ConfigError, check_environment
from core.engine.store.migrations import StoreError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core", description="Multi-agent medical RAG studio, command line.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(core.studio.cli.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"core.studio.cli.{info.name}")
        if hasattr(module, "register"):
            module.register(commands)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 0
    try:
        check_environment()
        return args.handler(args)
    except (ConfigError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before any run started, or a third Ctrl-C: nothing to keep
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
