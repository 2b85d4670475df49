"""Online checkers server: English draughts and American pool checkers."""

__version__ = "0.1.0"
