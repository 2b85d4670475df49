"""Correspondence games: days per move, the time alarm and the notices of a move and an
end (`service`), and conditional moves (`conditional`). docs/notifications.md.

May import: live, accounts, notify, play.
"""
