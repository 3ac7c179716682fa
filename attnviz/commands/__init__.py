"""Subcommands of the attnviz CLI, one module each (see attnviz.cli)."""
