"""The node agent (`triagebot agent`): a read-only HTTP API over node-local evidence, run as a DaemonSet.

Import what you need from its modules (`collectors.agent.app`, `.server`, `.config`); the package itself
imports nothing, so its modules never import each other through it.
"""
