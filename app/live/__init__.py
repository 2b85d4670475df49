"""The live layer of one process: the numbered event log stored with each change
(`log_store`), the table events and other messages, each typed and built in one place
(`events`, `messages`), the process's live state and the way events go out (`liveplay`: the
cache of games in progress, their locks, announce and the broker's rings), the heartbeats
(`heartbeat`), the move rate and the pruning of old logs (`retention`).

Everything else stands on it: each use case stores its change with its events here, then
announces them.

May import: play.
"""
