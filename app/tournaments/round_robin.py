"""Round-robin schedules by Berger tables: every player meets every other once (twice in a
double round robin), one round at a time.

Berger's construction, as in the Berger tables of the FIDE Handbook: with an even number ``n``
of players, player ``n`` stays put while the others turn round a circle. Round 1 is 1-n,
2-(n-1), 3-(n-2)…; in each later round the last player's opponent moves on by ``n/2`` places
(modulo ``n-1``), the last player's colour alternating, and the other boards pair the players
the same distance either side of that opponent (the nearer pair first, the player after the
opponent on the circle named first). Boards are listed in the tables' order, the last player's
board first. The first-named player of a pair moves first: in checkers, Black.

With an odd number of players a dummy player makes the count even; whoever meets the dummy sits
that round out, so the pair is simply left out. A double round robin plays the same table again
with the colours reversed, so that each pair has one game with each colour.

The service limits round robins to twelve players (eleven rounds, 22 in a double); the tables
themselves work for any number.
"""

from __future__ import annotations

Pairing = tuple[int, int]
"""(black_index, white_index): indices 0..n-1 of the players in their seeding order."""


def berger(n: int, double: bool = False) -> list[list[Pairing]]:
    """The rounds of a round robin for ``n`` players, each a list of (black, white) pairs in
    board order; with ``double`` the second cycle follows, colours reversed."""
    if n < 2:
        raise ValueError(f"a round robin needs at least two players, not {n}")
    size = n + n % 2  # a dummy player makes the count even
    circle = size - 1
    rounds: list[list[Pairing]] = []
    for number in range(circle):
        # 1-based places as in the printed tables; the fixed player is ``size``.
        opponent = number * (size // 2) % circle + 1
        fixed = (opponent, size) if number % 2 == 0 else (size, opponent)
        pairs = [fixed]
        for k in range(1, size // 2):
            first = (opponent - 1 + k) % circle + 1
            second = (opponent - 1 - k) % circle + 1
            pairs.append((first, second))
        rounds.append([(a - 1, b - 1) for a, b in pairs if a <= n and b <= n])
    if double:
        rounds += [[(white, black) for black, white in round_] for round_ in rounds]
    return rounds
