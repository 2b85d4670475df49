"""Notifications: the inbox of each player (`inbox`: notices written in the transaction of
what caused them, pushed once committed), mail written to the outbox (`mail`), the outbox's
worker (`mailer`) and each player's e-mail address and choices (`email_settings`).
docs/notifications.md.

May import: live, accounts.
"""
