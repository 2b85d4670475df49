"""Use cases joining rules, storage and broker; they know nothing of HTTP or websockets."""
