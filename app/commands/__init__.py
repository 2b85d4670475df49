"""Subcommands of the `checkers` command; each module defines `register(subparsers)`."""
