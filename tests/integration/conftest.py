"""Fixtures for the integration tests: real PostgreSQL and SQLite stores."""

from tests.harness.fixtures import *  # noqa: F403
