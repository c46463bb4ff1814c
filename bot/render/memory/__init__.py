"""Rendering of the incident memory: production accuracy, recurrence, the postmortem draft, the digest."""
