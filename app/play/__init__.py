"""The game in progress: a move validated and stored (`games`, with `commits`, the group
commit of moves, and `refusals`, a refused move in words), the cache of games a process serves
(`cache`), what a stored row says (`state`), the clocks (`clocks`), draws, resignations and
claims (`decisions`), takebacks, time-outs and first moves (`timeouts`), a game's end
(`endings`), a game followed from another process (`following`), games recovered after
downtime (`recovery`), absences (`absences`). Its storage: the games and moves (`store`,
`moves_store`) and the rows of the tables they are played at (`tables_store`); `players` holds
what live play knows of a player, a game and a table.

May import: live, accounts, ratings, correspondence, tables, tournaments.
"""
