"""Storage: SQLAlchemy models, the engine/session factory and one repository module per aggregate."""
