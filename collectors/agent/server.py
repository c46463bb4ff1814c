"""Running the agent under uvicorn."""

from __future__ import annotations

import uvicorn

from collectors.agent.app import create_app
from collectors.agent.config import AgentSettings
from collectors.jsonlog import configure


def serve(settings: AgentSettings) -> None:
    """Serve until stopped. JSON logs at TRIAGEBOT_LOG_LEVEL, redacted. No access log: it would record every
    caller's query, and nothing of value."""
    configure()
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_config=None,
                access_log=False, proxy_headers=False, server_header=False)
