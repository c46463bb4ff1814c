"""Fixtures every test folder may use: the store fixtures (a session-wide PostgreSQL, a database per test, SQLite
files) and `prom` (a module's Prometheus, backfilled from the module's `history` fixture), registered once, here.

Registered once on purpose: a session-scoped fixture imported into a test module is a separate fixture in each
module that imports it, so each such module started (and kept running until the end) a PostgreSQL of its own.
Test modules use these fixtures by name and do not import them.
"""

from tests.harness.fixtures import *  # noqa: F403
from tests.harness.meaning import *  # noqa: F403
from tests.harness.prometheus import prom  # noqa: F401
