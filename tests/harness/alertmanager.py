"""The real alerting chain for tests: a gauge exporter, Prometheus with alert rules, and Alertmanager (Debian's
packages) firing webhooks at the bot, all on 127.0.0.1 in a temp dir.

    exporter = GaugeExporter("DCGM_FI_DEV_XID_ERRORS", labelnames=("gpu", "Hostname"))
    with exporter, start_alertmanager(root, webhook_url, token) as am, \
            start_alerting_prometheus(root, rules=RULES, scrape=[exporter.target], alertmanager=am) as prom:
        exporter.set({"gpu": "1", "Hostname": "node-a"}, 79)   # fires within ~2 s

Timings (components.md section 3): scrape and rule evaluation every 1 s, group_wait and group_interval 1 s, so a
value flip reaches the webhook in 1-2 s, firing or resolved. repeat_interval is 1 h: no repeat arrives during a
test unless the test sends one itself. The cluster listener is disabled (`--cluster.listen-address=`) so no gossip
port is opened and two tests never form a cluster.

A missing binary fails the test in CI (CI set) and skips it elsewhere, like the other harnesses.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry, Gauge, start_http_server

from tests.harness.processes import came_up, ready, stop_process
from tests.harness.prometheus import free_port

READY_TIMEOUT = 30.0
_START_ATTEMPTS = 3
ALERTMANAGER_BINARY = "prometheus-alertmanager"  # Debian's name; upstream calls it `alertmanager`


def require(name: str, package: str) -> str:
    """The binary's path; if absent, fail in CI (CI set) and skip with a clear message elsewhere."""
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)
    if path:
        return path
    message = (f"`{name}` is not installed (install Debian's {package} package: "
               f"apt-get install -y --no-install-recommends {package})")
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must provide it", pytrace=False)
    pytest.skip(f"{message}; skipped because CI is unset")


# ---------------------------------------------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------------------------------------------


def _log_text(log: Path) -> str:
    return log.read_text(errors="replace")[-6000:] if log.exists() else "(no log)"


def _wait_ready(name: str, url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while not ready(url):
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}:\n{_log_text(log)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} not ready after {READY_TIMEOUT:g}s:\n{_log_text(log)}")
        time.sleep(0.05)


@contextmanager
def _serve(name: str, argv_for_port: Callable[[int], list[str]], log: Path) -> Iterator[str]:
    """Start `argv_for_port(port)` until it answers /-/ready, retrying on a port lost to another process."""
    for attempt in range(_START_ATTEMPTS):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with log.open("wb") as sink:
            process = subprocess.Popen(argv_for_port(port), stdout=sink, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
        if not came_up(process, log, attempt + 1 == _START_ATTEMPTS, _wait_ready, name, url, process, log):
            continue
        try:
            yield url
        finally:
            stop_process(process)
        return


def _check(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{what} rejected the generated config:\n{done.stdout}\n{done.stderr}")


# ---------------------------------------------------------------------------------------------------------------
# Alertmanager
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlertmanagerServer:
    url: str
    config: Path
    log: Path

    @property
    def address(self) -> str:
        """host:port, as Prometheus' alerting config wants it."""
        return self.url.removeprefix("http://")

    def post_alerts(self, alerts: Sequence[Mapping[str, Any]]) -> None:
        """POST /api/v2/alerts, the way Prometheus delivers alerts (a shortcut that skips Prometheus)."""
        request = urllib.request.Request(f"{self.url}/api/v2/alerts", data=json.dumps(list(alerts)).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=5.0) as response:
            if response.status != 200:
                raise RuntimeError(f"alertmanager answered {response.status}")


def alertmanager_config(webhook_url: str, token: str, *, auth: str = "bearer",
                        group_by: Iterable[str] = ("alertname", "Hostname"), group_wait: str = "1s",
                        group_interval: str = "1s", repeat_interval: str = "1h") -> dict[str, Any]:
    """One route to one webhook receiver that authenticates with `token`.

    `auth="bearer"` sends `Authorization: Bearer <token>` (http_config.authorization, type defaults to Bearer);
    `auth="basic"` sends basic auth with the token as password, the other scheme the bot accepts.
    """
    if auth == "bearer":
        http_config: dict[str, Any] = {"authorization": {"type": "Bearer", "credentials": token}}
    elif auth == "basic":
        http_config = {"basic_auth": {"username": "alertmanager", "password": token}}
    else:
        raise ValueError(f"auth: expected bearer or basic, got {auth!r}")
    return {
        "route": {"receiver": "bot", "group_by": list(group_by), "group_wait": group_wait,
                  "group_interval": group_interval, "repeat_interval": repeat_interval},
        "receivers": [{"name": "bot", "webhook_configs": [
            {"url": webhook_url, "send_resolved": True, "http_config": http_config}]}],
    }


@contextmanager
def start_alertmanager(root: Path, webhook_url: str, token: str, **config: Any) -> Iterator[AlertmanagerServer]:
    """Write and check the config, start Alertmanager on a free loopback port, yield it, stop it.

    Keyword arguments go to `alertmanager_config`.
    """
    binary = require(ALERTMANAGER_BINARY, "prometheus-alertmanager")
    home = root / "alertmanager"
    (home / "data").mkdir(parents=True, exist_ok=False)
    path = home / "alertmanager.yml"
    path.write_text(yaml.safe_dump(alertmanager_config(webhook_url, token, **config), sort_keys=False))
    amtool = shutil.which("amtool")
    if amtool:  # the same package ships it; its verdict is clearer than a start-up failure
        _check([amtool, "check-config", str(path)], "amtool check-config")
    log = home / "alertmanager.log"

    def argv(port: int) -> list[str]:
        # Empty --cluster.listen-address: no gossip port, so parallel tests never join one cluster.
        # --web.external-url fixes the externalURL in payloads (otherwise the machine's hostname).
        return [binary, f"--config.file={path}", f"--storage.path={home / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address=",
                f"--web.external-url=http://127.0.0.1:{port}", "--log.level=info"]

    with _serve("alertmanager", argv, log) as url:
        yield AlertmanagerServer(url=url, config=path, log=log)


# ---------------------------------------------------------------------------------------------------------------
# Prometheus with rules, scraping an exporter and alerting to Alertmanager
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlertingPrometheus:
    url: str
    config: Path
    log: Path

    def wait_scraped(self, timeout: float = 15.0) -> None:
        """Wait until every target has been scraped once. Prometheus applies new scrape targets on a 5 s tick,
        so right after start-up a value change can go unseen for seconds; tests flip values after this."""
        self.wait_for("min(up) == 1", timeout, "every target scraped once")

    def wait_for(self, expr: str, timeout: float, what: str) -> None:
        """Wait until the instant query `expr` answers with at least one series: a test waits for the samples a
        rule needs instead of sleeping for a guessed number of scrapes."""
        query = urllib.parse.urlencode({"query": expr})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/api/v1/query?{query}", timeout=2.0) as response:
                    if json.load(response)["data"]["result"]:
                        return
            except (urllib.error.URLError, OSError, KeyError, ValueError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"prometheus: no {what} within {timeout:g}s:\n{_log_text(self.log)}")


@contextmanager
def start_alerting_prometheus(root: Path, *, rules: Mapping[str, Any], scrape: Iterable[str],
                              alertmanager: AlertmanagerServer, job: str = "dcgm") -> Iterator[AlertingPrometheus]:
    """Prometheus that scrapes `scrape` (host:port targets) every second, evaluates `rules` (a rules-file
    document) every second and sends alerts to `alertmanager`."""
    binary = require("prometheus", "prometheus")
    promtool = require("promtool", "prometheus")
    home = root / "prometheus-alerting"
    (home / "data").mkdir(parents=True, exist_ok=False)
    rules_path = home / "rules.yml"
    rules_path.write_text(yaml.safe_dump(dict(rules), sort_keys=False))
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules_path)],
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [alertmanager.address]}]}]},
        "scrape_configs": [{"job_name": job, "static_configs": [{"targets": list(scrape)}]}],
    }
    path = home / "prometheus.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    _check([promtool, "check", "config", str(path)], "promtool check config")
    log = home / "prometheus.log"

    def argv(port: int) -> list[str]:
        return [binary, f"--config.file={path}", f"--storage.tsdb.path={home / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}", f"--web.external-url=http://127.0.0.1:{port}"]

    with _serve("prometheus", argv, log) as url:
        yield AlertingPrometheus(url=url, config=path, log=log)


class GaugeExporter:
    """A /metrics endpoint (prometheus-client) with one gauge family whose series the test sets.

    It listens on port 0, so the kernel picks a free port and nothing can take it in between.
    """

    def __init__(self, name: str, help_text: str = "set by the test", labelnames: Sequence[str] = ()) -> None:
        self.registry = CollectorRegistry()
        self.gauge = Gauge(name, help_text, list(labelnames), registry=self.registry)
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def set(self, labels: Mapping[str, str], value: float) -> None:
        (self.gauge.labels(**labels) if labels else self.gauge).set(value)

    @property
    def target(self) -> str:
        if self._server is None:
            raise RuntimeError("start the exporter first")
        return f"127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> GaugeExporter:
        self._server, self._thread = start_http_server(0, addr="127.0.0.1", registry=self.registry)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
