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
(start its triage, wake the poster): the crash window between the commit and what follows it. Beside triage worker
processes the ingester is a process of its own (bot/webhook/ingester_process.py): it kills this process and then
itself. --die-before-apply kills the process that applies the first webhook after it was appended to the intake
and answered, before it is applied: this process when the ingester is its thread; else the ingester process
alone, once (the one the serving process starts after it applies the notification).
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
from bot.webhook import ingester_process
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
        # Beside the port file, so that each replica's ingester process dies once.
        os.environ[DIED_MARKER] = str(args.port_file.with_suffix(".ingester-died"))
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


def _die_after_webhook_commit(*, in_child: bool = False) -> None:
    """Have the ingester die the moment it has committed the first webhook's effect, before anything follows the
    commit (start its triage, wake the poster); in the ingester process, with the serving process first."""
    import bot.webhook.apply
    import bot.webhook.intake

    class DyingIngester(bot.webhook.intake.Ingester):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self._applied = self._die

        def _die(self, _requests: list[Any]) -> None:
            if in_child:
                os.kill(os.getppid(), signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)
            raise AssertionError("unreachable: SIGKILL cannot be caught")

    if in_child:
        bot.webhook.intake.Ingester = DyingIngester  # type: ignore[misc]
    else:
        bot.webhook.apply.Ingester = DyingIngester  # type: ignore[misc]
        ingester_process.ingester_main = _ingester_dying_after_commit


def _ingester_dying_after_commit(*args: Any) -> None:
    """The ingester process's entry point under --die-after-webhook-commit (spawned: it imports this module)."""
    _die_after_webhook_commit(in_child=True)
    _REAL_INGESTER_MAIN(*args)


def _die_before_apply(*, in_child: bool = False) -> None:
    """Have the ingester wait until the webhook's answer has left, then kill its process before it applies; in
    the ingester process only once, marked by a file, so that its successor applies the notification."""
    import bot.webhook.apply

    real = bot.webhook.apply.apply_alerts
    marker = Path(os.environ.get(DIED_MARKER, "/nonexistent/ingester-died"))

    def die(*args: Any, **kwargs: Any) -> Any:
        if in_child and marker.exists():
            return real(*args, **kwargs)
        time.sleep(1.0)  # the request appended the row before the ingester was woken; its 200 leaves meanwhile
        if in_child:
            marker.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable: SIGKILL cannot be caught")

    bot.webhook.apply.apply_alerts = die
    if not in_child:
        ingester_process.ingester_main = _ingester_dying_before_apply


def _ingester_dying_before_apply(*args: Any) -> None:
    """The ingester process's entry point under --die-before-apply."""
    _die_before_apply(in_child=True)
    _REAL_INGESTER_MAIN(*args)


DIED_MARKER = "TRIAGEBOT_TEST_INGESTER_DIED"  # environment: the file the ingester process writes as it dies
_REAL_INGESTER_MAIN = ingester_process.ingester_main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
