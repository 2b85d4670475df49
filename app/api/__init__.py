"""The REST face: one module per resource, plus deps.py."""
