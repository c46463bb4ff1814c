"""Parsers of Kubernetes objects and kubectl output: describe, get tables, events, manifests, and the joins
between them."""
