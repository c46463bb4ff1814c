"""Which failures mean the database is away (unreachable, restarting, full) rather than a bug in a statement."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError


def database_away(err: BaseException) -> bool:
    """A connection refused or dropped, a server shutting down, a disk full, a lock not granted in time: worth
    answering 503 and retrying. An IntegrityError or a ProgrammingError is a bug and stays one."""
    if isinstance(err, (OperationalError, InterfaceError)):
        return True
    return isinstance(err, DBAPIError) and bool(err.connection_invalidated)
