"""Parsers of application-side logs: access logs, container and training logs, curl's write-out."""
