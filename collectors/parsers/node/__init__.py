"""Parsers of a node's own logs and counters: the kernel, kubelet, conntrack, cpu.stat, top and network links."""
