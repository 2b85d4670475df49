"""Tournament logic, pure like ``app.rules`` and ``app.engine`` (the only packages of ours it
imports): arena scoring and pairing waves (``arena``), Swiss pairing (``swiss``) and its
tie-breaks (``tiebreaks``), round-robin tables (``round_robin``), and ballot openings for
two-game matches (``ballot``, its deck built by ``deck_build``). No I/O beyond reading the deck
shipped in the package, no clock, no database: the services call it with plain values.

The subsystem's server code stands beside the pure modules: creating, joining and reading
tournaments (`service`, `settings`), the director that starts, pairs and finishes them
(`director`, `rounds`, `games`), the standings (`scores`), their storage (`store`).
docs/tournaments.md.

May import: live, ratings, notify, play, tables.
"""
