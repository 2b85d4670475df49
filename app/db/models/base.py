"""The declarative base with its naming convention, and the limits of ids and event numbers."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Integer,
    MetaData,
)
from sqlalchemy.orm import DeclarativeBase

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


# Integer primary keys that are BIGINT on Postgres and INTEGER (rowid alias) on SQLite.
BigId = BigInteger().with_variant(Integer(), "sqlite")
# The largest id either holds: the faces refuse bigger ones, which no database can even look up.
MAX_ID = 2**63 - 1
# The largest number a table's event can have (`table_events.seq`, `tables.event_seq`: INTEGER,
# 32 bits on PostgreSQL): a resume from beyond it is ahead of every log.
MAX_EVENT_SEQ = 2**31 - 1
