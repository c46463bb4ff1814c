"""One bot replica as its own process, for tests and benchmarks (see bot_server.bot_process).

usage: python -m tests.harness.bot_launcher SETTINGS_JSON PORT_FILE [--instance NAME] [--slack]
                                          [--die-after-webhook-commit] [--die-before-apply]

It serves `bot.server.create_app(build_context(settings))` on 127.0.0.1 and a kernel-chosen port, writes the port
to PORT_FILE once the socket listens, records NAME as the replica that stored each alert, and shuts down
gracefully when its stdin reaches EOF. Stopping on EOF rather than on a signal means a crashed test run cannot
leave replicas behind: their stdin closes with the parent. --slack also serves /slack/events with the bolt app
(bot/slack/app.py), as `triagebot serve` does in HTTP mode.

Fault points (tests only; the bot itself has none): --die-after-webhook-commit kills this process with SIGKILL as
soon as the ingester's transaction applying the first Alertmanager webhook has committed, before anything else
(start its triage, wake the poster): the crash window between the commit and what follows it. --die-before-apply
kills it after the first webhook was appended to the intake and answered, before the ingester applies it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bot.context import build_context
from bot.logs import configure
from bot.server import create_app
from tests.harness.bot_server import listening_socket, settings_from, uvicorn_server


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.bot_launcher")
    parser.add_argument("settings", type=Path)
    parser.add_argument("port_file", type=Path)
    parser.add_argument("--instance", help="name recorded with every alert this replica stores")
    parser.add_argument("--slack", action="store_true", help="serve /slack/events too")
    parser.add_argument("--die-after-webhook-commit", action="store_true",
                        help="SIGKILL this process right after the first webhook's transaction commits")
    parser.add_argument("--die-before-apply", action="store_true",
                        help="SIGKILL this process once the first webhook is answered, before it is applied")
    args = parser.parse_args(argv)
    if args.die_after_webhook_commit:
        _die_after_webhook_commit()
    if args.die_before_apply:
        _die_before_apply()
    settings = settings_from(json.loads(args.settings.read_text()))
    configure("WARNING")
    # As `triagebot serve` runs it; replicas on one host would otherwise all record the same hostname.
    ctx = build_context(settings, start_workers=True, instance=args.instance)
    handler = None
    if args.slack:
        from slack_bolt.adapter.starlette import SlackRequestHandler

        from bot.slack.app import build_slack_app

        handler = SlackRequestHandler(build_slack_app(ctx))
    sock = listening_socket()
    server = uvicorn_server(create_app(ctx, handler))

    def stop_on_eof() -> None:
        sys.stdin.buffer.read()
        server.should_exit = True

    threading.Thread(target=stop_on_eof, name="stdin-eof", daemon=True).start()
    port_file: Path = args.port_file
    partial = port_file.with_suffix(".tmp")
    partial.write_text(str(sock.getsockname()[1]))
    os.replace(partial, port_file)  # the parent never reads a half-written port
    try:
        server.run(sockets=[sock])
    finally:
        ctx.close()
        sock.close()
    return 0


def _die_after_webhook_commit() -> None:
    """Have the ingester die the moment it has committed the first webhook's effect, before anything follows the
    commit (start the triage, wake the poster)."""
    import bot.webhook.apply

    class DyingIngester(bot.webhook.apply.Ingester):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self._applied = self._die

        def _die(self, _requests: list[Any]) -> None:
            os.kill(os.getpid(), signal.SIGKILL)
            raise AssertionError("unreachable: SIGKILL cannot be caught")

    bot.webhook.apply.Ingester = DyingIngester  # type: ignore[misc]


def _die_before_apply() -> None:
    """Have the ingester wait until the webhook's answer has left, then kill the process before it applies."""
    import bot.webhook.apply

    def die(*_: Any, **__: Any) -> Any:
        time.sleep(1.0)  # the request appended the row before the ingester was woken; its 200 leaves meanwhile
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable: SIGKILL cannot be caught")

    bot.webhook.apply.apply_alerts = die


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
