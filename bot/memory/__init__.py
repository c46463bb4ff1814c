"""Incident memory (issue 30): what the store's history says about the bot's own verdicts."""
