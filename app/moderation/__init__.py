"""Administration: rooms, tables and games (`admin`, `rooms`), users, kicks, bans and the
ratings review queue (`users`); every action written to the audit log (`app.db.audit`).

May import: live, accounts, ratings, play, tables.
"""
