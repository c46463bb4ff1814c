"""Parsers: pure functions from one Artifact to facts. They never raise on bad input."""
