"""`python -m collectors.agent`: the node agent with settings from TRIAGEBOT_AGENT_* variables."""

from __future__ import annotations

import sys

from pydantic import ValidationError

from collectors.agent.config import AgentSettings
from collectors.agent.server import serve


def main() -> int:
    try:
        settings = AgentSettings()  # the token comes from TRIAGEBOT_AGENT_TOKEN
    except ValidationError as err:
        first = err.errors()[0]
        name = ".".join(str(p) for p in first["loc"])
        print(f"triagebot agent: setting {name} (TRIAGEBOT_AGENT_{name.upper()}): {first['msg']}", file=sys.stderr)
        return 2
    serve(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
