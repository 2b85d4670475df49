"""The bot API: bot accounts (`accounts`), the event and game streams in lichess's shape
(`streams`, `lichess`). docs/bots.md.

May import: live, accounts, matchmaking, play, tables.
"""
