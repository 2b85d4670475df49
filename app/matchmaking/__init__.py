"""Finding an opponent: the quick-pairing pools and their seeks (`pools`) and challenges
(`challenges`).

May import: live, accounts, ratings, notify, play, tables.
"""
