"""The bot's HTTP server, started for real: `create_app(build_context(settings))` under uvicorn on 127.0.0.1.

Two ways to run it:

* `bot_in_thread(settings)`: in this process, on a uvicorn thread. The test can reach into `bot.ctx` (engine,
  metrics, poster) and a failure shows up in the test's own traceback.
* `bot_process(values, workdir)`: a separate OS process (`python -m tests.harness.bot_launcher`), for tests
  that need two replicas racing on one database, and for benchmarks that measure the bot's own RSS.

Both listen on a socket bound to port 0 before the server starts, so no other process can take the port.
`bot_values()` builds the settings as plain JSON-able values that both accept.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from slack_bolt.adapter.starlette import SlackRequestHandler

from bot.config import Settings
from bot.context import BotContext, build_context
from bot.server import create_app
from bot.slack.app import build_slack_app

ROOT = Path(__file__).resolve().parents[2]
WEBHOOK_TOKEN = "webhook-token-0123456789abcdef"
SIGNING_SECRET = "signing-secret-for-tests"
# A deadline for a start that hangs, not a budget: on a loaded 2-core machine (load 12) a bot process took over
# 30 s to import and answer, and every test that starts one failed with "did not start".
START_TIMEOUT = 120.0
STOP_TIMEOUT = 10.0


def bot_values(*, slack_api_url: str, database_url: str, slack_token: str = "xoxb-test-token",
               routes: list[dict[str, Any]] | None = None, default_channel: str | None = "C0OPS",
               webhook_token: str = WEBHOOK_TOKEN, permissions: Mapping[str, Any] | None = None,
               prometheus_url: str | None = None, kubeconfig: Path | None = None, **extra: Any) -> dict[str, Any]:
    """Settings for a bot that posts to a Slack stand-in and stores in `database_url`.

    `kubeconfig` defaults to a path that does not exist, so a triage reports the Kubernetes source as missing
    instead of picking up whatever ~/.kube/config this machine has.
    """
    values: dict[str, Any] = {
        "slack_bot_token": slack_token,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_api_url": slack_api_url,
        "database_url": database_url,
        "webhook_token": webhook_token,
        "routes": list(routes or []),
        "default_channel": default_channel,
        "permissions": dict(permissions or {"channels": {}}),
        "prometheus_url": prometheus_url,
        "kubeconfig": str(kubeconfig or Path("/nonexistent/triagebot-test-kubeconfig")),
        # Small budgets: a source that cannot answer should become a `missing` entry quickly in a test.
        "call_timeout": 2.0,
        "deadline": 8.0,
    }
    values.update(extra)
    return values


def settings_from(values: Mapping[str, Any]) -> Settings:
    return Settings(**dict(values))


def bearer(token: str = WEBHOOK_TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def basic(password: str = WEBHOOK_TOKEN, user: str = "alertmanager") -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before uvicorn starts: early connections wait in the backlog instead of being refused.
    sock.listen(128)
    return sock


def uvicorn_server(app: Any) -> uvicorn.Server:
    # No lifespan (the app has none), no access log, no uvicorn logging config: the bot's own logs are the record.
    return uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off",
                                         server_header=False, timeout_graceful_shutdown=2))


@dataclass
class RunningBot:
    url: str
    ctx: BotContext

    def client(self, **kwargs: Any) -> httpx.Client:
        """A client of this bot. A webhook it is answered 200 for is applied before the call returns: the bot
        applies it on its ingester thread after answering (bot/webhook/intake.py), and a test that reads its effect
        right after the answer should see it. Bots in processes (`bot_process`) show the asynchrony as it is."""
        hooks = kwargs.pop("event_hooks", {})
        hooks = {**hooks, "response": [*hooks.get("response", []), self._settle]}
        return httpx.Client(base_url=self.url, timeout=10.0, event_hooks=hooks, **kwargs)

    def _settle(self, response: httpx.Response) -> None:
        if response.request.method == "POST" and response.request.url.path == "/alertmanager" \
                and response.status_code == 200:
            self.ctx.ingester.settled()


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a thread on a free loopback port; yields its base URL."""
    sock = listening_socket()
    server = uvicorn_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="bot-server", daemon=True)
    try:
        thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the uvicorn server did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT)
        sock.close()


@contextmanager
def serve_bot(ctx: BotContext) -> Iterator[tuple[str, httpx.Client]]:
    """The bot of `ctx`, its Slack app included, served on a thread, and a client; `ctx` is closed afterwards."""
    try:
        with serve_app(create_app(ctx, SlackRequestHandler(build_slack_app(ctx)))) as url, \
                httpx.Client(timeout=10) as http:
            yield url, http
    finally:
        ctx.close()


@contextmanager
def bot_in_thread(settings: Settings, slack_handler: Any | None = None) -> Iterator[RunningBot]:
    """Build the context (migrating the database, starting the poster), serve it, and close it afterwards."""
    ctx = build_context(settings)
    try:
        with serve_app(create_app(ctx, slack_handler)) as url:
            yield RunningBot(url=url, ctx=ctx)
    finally:
        ctx.close()


@dataclass
class BotProcess:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def _status(self, field: str) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
        raise RuntimeError(f"{field} not in /proc/{self.pid}/status")

    def rss_bytes(self) -> int:
        return self._status("VmRSS")

    def peak_rss_bytes(self) -> int:
        """The high-water mark of the resident set since the process started."""
        return self._status("VmHWM")

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")[-8000:] if self.log.exists() else "(no log)"


def _clean_env() -> dict[str, str]:
    # The child's settings come from the JSON file only: a developer's TRIAGEBOT_* or SLACK_* must not leak in.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRIAGEBOT_", "SLACK_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _spawn(values: Mapping[str, Any], workdir: Path, name: str, slack: bool,
           options: Sequence[str] = ()) -> tuple[subprocess.Popen[bytes], Path, Path]:
    workdir.mkdir(parents=True, exist_ok=True)
    settings_file = workdir / f"{name}-settings.json"
    settings_file.write_text(json.dumps(dict(values)))
    port_file = workdir / f"{name}.port"
    log = workdir / f"{name}.log"
    with log.open("wb") as sink:
        argv = [sys.executable, "-m", "tests.harness.bot_launcher", str(settings_file), str(port_file),
                "--instance", name, *(["--slack"] if slack else []), *options]
        process = subprocess.Popen(argv, cwd=ROOT, env=_clean_env(), stdin=subprocess.PIPE,
                                   stdout=sink, stderr=subprocess.STDOUT)
    return process, port_file, log


def _await_ready(process: subprocess.Popen[bytes], port_file: Path, log: Path, name: str) -> BotProcess:
    deadline = time.monotonic() + START_TIMEOUT
    while not port_file.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"bot process {name} did not start (exit {process.poll()}):\n"
                               f"{log.read_text(errors='replace')[-6000:]}")
        time.sleep(0.02)
    bot = BotProcess(url=f"http://127.0.0.1:{int(port_file.read_text())}", process=process, log=log)
    with httpx.Client(timeout=2.0) as client:
        while True:
            try:
                if client.get(f"{bot.url}/healthz").status_code == 200:
                    return bot
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"bot process {name} is not answering:\n{bot.log_text()}")
            time.sleep(0.02)


def _shut_down(process: subprocess.Popen[bytes]) -> None:
    if process.stdin is not None and not process.stdin.closed:
        process.stdin.close()  # the launcher's signal to shut down gracefully
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def start_bot_process(values: Mapping[str, Any], workdir: Path, name: str, slack: bool = False,
                      options: Sequence[str] = ()) -> BotProcess:
    """One replica, started and answering; stop it with `stop_bot_process` (or kill it: `bot.process.kill()`).
    `options` go to the launcher (e.g. its fault points, `--die-after-webhook-commit`)."""
    process, port_file, log = _spawn(values, workdir, name, slack, options)
    try:
        return _await_ready(process, port_file, log, name)
    except BaseException:
        _shut_down(process)
        raise


def stop_bot_process(bot: BotProcess) -> None:
    _shut_down(bot.process)


@contextmanager
def stopped_after(current: Callable[[], BotProcess]) -> Iterator[None]:
    """Stop the bot `current()` returns when the block ends (a block may kill it and start the next one), and
    print its log when the block fails an assertion."""
    try:
        yield
    except AssertionError:
        bot = current()
        print(f"--- {bot.log}\n{bot.log_text()}")
        raise
    finally:
        stop_bot_process(current())


@contextmanager
def bot_processes(values: Mapping[str, Any], workdir: Path, names: Sequence[str],
                  slack: bool = False) -> Iterator[list[BotProcess]]:
    """Replicas sharing `values` (so one database and one Slack), started together, each in its own process.

    They start at the same time on purpose: their migrations race too, as they would in a rollout.
    """
    spawned = [(_spawn(values, workdir, name, slack), name) for name in names]
    try:
        yield [_await_ready(process, port_file, log, name) for (process, port_file, log), name in spawned]
    finally:
        for (process, _, _), _ in spawned:
            _shut_down(process)


@contextmanager
def bot_process(values: Mapping[str, Any], workdir: Path, name: str = "bot",
                slack: bool = False) -> Iterator[BotProcess]:
    """Run the bot in its own process until the block ends (its stdin is closed to stop it); `slack` serves
    /slack/events with the bolt app as well."""
    with bot_processes(values, workdir, [name], slack) as (bot,):
        yield bot
