"""The node agent (`triagebot agent`): a read-only HTTP API over node-local evidence, run as a DaemonSet."""

from collectors.agent.app import create_app
from collectors.agent.config import AgentSettings
from collectors.agent.server import serve

__all__ = ["AgentSettings", "create_app", "serve"]
