"""The computer opponent: its searches (`search`, in a thread or a process pool), the fair
queue of searches (`queue`), the players it drives and their moves (`service`), the limits on
games against it (`limits`). A game against it is opened at a table (`app.tables.opening`).

May import: live, play.
"""
