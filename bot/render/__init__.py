"""Renderers: one report model, shown for the terminal, markdown, JSON (and Slack, elsewhere)."""
