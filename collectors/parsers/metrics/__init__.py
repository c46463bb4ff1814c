"""Parsers of numbers: Prometheus text and API answers, PromQL samples, and figures in any layout."""
