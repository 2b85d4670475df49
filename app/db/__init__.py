"""Storage: SQLAlchemy models, the engine and session factory, one repository per aggregate."""
