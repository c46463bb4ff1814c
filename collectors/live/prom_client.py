"""The Prometheus HTTP client live triage uses: one query's success body, or the reason a person reads why not.

prometheus-api-client holds the connection; its session fetches the raw bodies, which become the artifacts exactly
as Prometheus sent them. Longer queries go as a POST form: a scope of many pods makes a long regex, and proxies cap
URL length.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import requests
from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException
from urllib3.exceptions import MaxRetryError, NewConnectionError
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.util.retry import Retry

from collectors.live.base import Window
from collectors.live.prom_plan import Query

_LONG_QUERY = 3000


class QueryFailed(Exception):
    """A query that got no usable answer; the message is the reason a person reads."""


def _timestamp(moment: datetime) -> str:
    return f"{moment.timestamp():.3f}"


def _cause(err: requests.RequestException) -> object:
    """The underlying failure: with retries off, urllib3 wraps it in MaxRetryError, and requests in turn
    reports even a read timeout as a ConnectionError."""
    inner = err.args[0] if err.args else None
    return inner.reason if isinstance(inner, MaxRetryError) else inner


def _transport_reason(err: requests.RequestException, timeout: float) -> str:
    cause = _cause(err)
    # NewConnectionError subclasses urllib3's ConnectTimeoutError, so it is told apart first.
    timed_out = not isinstance(cause, NewConnectionError) and isinstance(cause, TimeoutError | Urllib3Timeout)
    if isinstance(err, requests.Timeout) or timed_out:
        return f"timed out after {timeout:g}s"
    if isinstance(err, requests.ConnectionError):
        text = str(cause or err)
        return "connection refused" if "refused" in text.lower() else f"connection failed: {text[:200]}"
    return f"request failed: {type(err).__name__}: {str(err)[:200]}"


def _error_reason(status: int, text: str) -> str:
    """`HTTP 400 bad_data: <message>` from an API error body, or the start of whatever came back."""
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and "error" in body:
        return f"HTTP {status} {body.get('errorType', 'error')}: {body['error']}"
    return f"HTTP {status}: {text.strip()[:200] or 'empty body'}"


class PromClient:
    """prometheus-api-client for the connection, its session for raw bodies (the library keeps only data)."""

    def __init__(self, url: str, timeout: float, headers: dict[str, str] | None) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update(headers or {})
        # No retries: the library's default retries a closed port for 6 s, longer than a triage can wait.
        # TLS stays verified (the session carries a bearer token); REQUESTS_CA_BUNDLE adds a private CA.
        self.api = PrometheusConnect(url=self.url, headers=headers, retry=Retry(total=0), session=self.session)

    def close(self) -> None:
        self.api.close()

    def probe(self, moment: datetime) -> str | None:
        """Why Prometheus is unusable (unreachable, or refusing even `vector(1)`), or None if it answers."""
        try:
            self.api.custom_query("vector(1)", params={"time": _timestamp(moment)}, timeout=self.timeout)
        except requests.JSONDecodeError:  # before RequestException, which it also is
            return f"prometheus at {self.url} did not answer a probe query with JSON: is this its API URL?"
        except requests.RequestException as err:
            return f"prometheus unreachable at {self.url}: {_transport_reason(err, self.timeout)}"
        except PrometheusApiClientException as err:
            return f"prometheus at {self.url} refused a probe query: {str(err)[:300]}"
        except (KeyError, TypeError):  # JSON, but without data.result
            return f"prometheus at {self.url} answered a probe query without data.result: is this its API URL?"
        return None

    def fetch(self, query: Query, window: Window) -> dict[str, Any]:
        """The success body of one query; raises QueryFailed with a reason otherwise."""
        # Prometheus' own timeout too, so an expensive query stops there rather than running on unread.
        params = {"query": query.promql, "timeout": f"{self.timeout:g}s"}
        if query.is_range:
            path = "/api/v1/query_range"
            params.update(start=_timestamp(window.since), end=_timestamp(window.until), step=str(query.step))
        else:
            path = "/api/v1/query"
            params["time"] = _timestamp(window.until)
        long = len(query.promql) > _LONG_QUERY
        try:
            response = self.session.request("POST" if long else "GET", self.url + path, timeout=self.timeout,
                                            data=params if long else None, params=None if long else params)
        except requests.RequestException as err:
            raise QueryFailed(_transport_reason(err, self.timeout)) from None
        if response.status_code != 200:
            raise QueryFailed(_error_reason(response.status_code, response.text))
        try:
            body = response.json()
        except ValueError:
            raise QueryFailed(f"not JSON: {response.text.strip()[:200]}") from None
        if not isinstance(body, dict) or body.get("status") != "success":
            raise QueryFailed(_error_reason(response.status_code, response.text))
        return body

