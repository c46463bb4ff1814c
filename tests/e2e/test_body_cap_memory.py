"""A 200 MiB body cannot grow the bot's memory: it is refused before it is read, or cut while it streams.

The bot runs in its own process (tests/harness/bot_launcher.py, with the Slack app), so its resident set is its
own. Each hostile upload is sent over a raw socket, 1 MiB at a time, while the bot's RSS is sampled from /proc;
the largest sample must stay within 20 MB of the idle bot. The assertion is about memory, not time: a slower
machine samples more often during a slower upload, never less.
"""

from __future__ import annotations

import socket
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.bot_server import WEBHOOK_TOKEN, BotProcess, bot_process, bot_values
from tests.standins.slack_api import SlackStandIn, signed_headers, slash_command_body

TOTAL = 200 * 1024 * 1024
CHUNK = b"x" * (1024 * 1024)
MARGIN = 20 * 1024 * 1024


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp("body-cap")
    with SlackStandIn() as slack:
        values = bot_values(slack_api_url=slack.api_url, database_url=f"sqlite:///{tmp / 'bot.sqlite'}")
        with bot_process(values, tmp, slack=True) as running:
            yield running


class RssSampler:
    """The largest VmRSS of a process seen while the block runs (sampled in a thread until told to stop)."""

    def __init__(self, bot: BotProcess) -> None:
        self.bot = bot
        self.peak = bot.rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.bot.rss_bytes())
            self._stop.wait(0.005)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.bot.rss_bytes())


def upload(url: str, path: str, headers: dict[str, str], *, chunked: bool) -> int | None:
    """Send a 200 MiB POST; the response status, or None when the bot closed the connection before answering."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as sock:
        head = [f"POST {path} HTTP/1.1", f"Host: {parts.netloc}", "Content-Type: application/json"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {TOTAL}")
        try:
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
            for _ in range(TOTAL // len(CHUNK)):
                if chunked:
                    sock.sendall(f"{len(CHUNK):x}\r\n".encode() + CHUNK + b"\r\n")
                else:
                    sock.sendall(CHUNK)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the bot answered and closed: exactly what a cap should do
        try:
            status_line = sock.makefile("rb").readline().decode()
        except (ConnectionResetError, TimeoutError):
            return None
    return int(status_line.split()[1]) if status_line.startswith("HTTP/1.1 ") else None


def idle_rss(bot: BotProcess) -> int:
    """The bot's RSS after it has served one of each request kind (so lazily imported code is loaded)."""
    import httpx

    body = slash_command_body("/triage", "help", response_url="http://127.0.0.1:9/x")
    with httpx.Client(base_url=bot.url, timeout=30) as client:
        assert client.post("/slack/events", content=body, headers=signed_headers(body, "signing-secret-for-tests",
                                                                                   form=True)).status_code == 200
        assert client.post("/alertmanager", content=b"{}",
                           headers={"Authorization": f"Bearer {WEBHOOK_TOKEN}"}).status_code == 400
    return bot.rss_bytes()


FAKE_SIGNATURE = {"X-Slack-Signature": "v0=" + "0" * 64}


@pytest.mark.parametrize(
    ("path", "headers", "chunked", "statuses"),
    [
        pytest.param("/slack/events", {}, False, {413, None}, id="slack-unsigned-declared"),
        pytest.param("/slack/events", {}, True, {401, None}, id="slack-unsigned-chunked"),
        pytest.param("/slack/events", FAKE_SIGNATURE | {"X-Slack-Request-Timestamp": "{now}"}, True, {413, None},
                     id="slack-well-formed-headers-chunked"),
        pytest.param("/alertmanager", {"Authorization": f"Bearer {WEBHOOK_TOKEN}"}, True, {413, None},
                     id="webhook-authorised-chunked"),
        pytest.param("/alertmanager", {}, True, {401, None}, id="webhook-unauthorised-chunked"),
    ],
)
def test_a_200_mib_body_stays_within_20_mb_of_idle(bot: BotProcess, path: str, headers: dict[str, str],
                                                   chunked: bool, statuses: set[int | None]) -> None:
    import time

    baseline = idle_rss(bot)
    filled = {k: v.replace("{now}", str(int(time.time()))) for k, v in headers.items()}
    with RssSampler(bot) as sampler:
        status = upload(bot.url, path, filled, chunked=chunked)
    assert status in statuses
    assert sampler.peak - baseline < MARGIN, (
        f"RSS grew by {(sampler.peak - baseline) / 2**20:.1f} MiB during the upload:\n{bot.log_text()}")
    # Still serving afterwards.
    import httpx

    assert httpx.get(f"{bot.url}/healthz", timeout=30).status_code == 200


def test_the_log_never_holds_the_body(bot: BotProcess) -> None:
    assert "xxxxxxxx" not in Path(bot.log).read_text(errors="replace")
