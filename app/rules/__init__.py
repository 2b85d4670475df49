"""Pure game logic: no I/O, no web framework, no database."""
