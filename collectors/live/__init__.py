"""Live sources: read-only collection from a cluster, producing the same artifacts recordings hold."""
