"""Accounts: registration, log-in and tokens (`service`, `sessions`), the guessing and
creation limits per address (`limits`), each player's settings (`preferences`), the addresses
an account played from (`addresses_store`, read by the fair-play rules).

May import: live.
"""
