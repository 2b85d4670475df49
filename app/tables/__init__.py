"""Rooms, tables and seats: opening a table (`opening`, a game against the computer
too), sitting, standing and starting a game (`seating`), leaving (`leaving`), the table as its
watchers see it (`service`), the chat (`chat`), who attends a table (`attendance`) and who is
away (`presence`), the rooms (`rooms`).

May import: live, accounts, ratings, play, correspondence, computer.
"""
