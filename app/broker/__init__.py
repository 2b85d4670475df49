"""Live fan-out behind a small async interface: in-process (memory://) or Redis (redis://)."""
