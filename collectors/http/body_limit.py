"""An ASGI middleware that caps request bodies before anything reads them.

A declared Content-Length over the cap is refused at once, without reading a byte; a chunked body is counted as
it streams and refused the moment it passes the cap, so no handler (and no library under it) can buffer more
than the cap. The limit is chosen per path, because a Slack payload and an Alertmanager batch differ in size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(Exception):
    """Raised from `receive` when a streamed body passes its cap; the middleware answers 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body larger than {limit} bytes")
        self.limit = limit


def too_large(limit: int) -> JSONResponse:
    return JSONResponse({"error": "payload too large", "expected": f"a body of at most {limit} bytes"},
                        status_code=413, headers={"Connection": "close"})


class BodyLimit:
    """Cap every request body: `limits` by exact path, `default` for any other path."""

    def __init__(self, app: ASGIApp, limits: Mapping[str, int] | Callable[[], Mapping[str, int]],
                 default: int = 4096) -> None:
        self.app = app
        self._limits = limits
        self.default = default

    def limit_for(self, path: str) -> int:
        limits = self._limits() if callable(self._limits) else self._limits
        return limits.get(path, self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = Headers(scope=scope).get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                response = JSONResponse({"error": "malformed Content-Length header",
                                         "expected": "Content-Length: <decimal byte count>"}, status_code=400)
                await response(scope, receive, send)
                return
            if int(declared) > limit:
                await too_large(limit)(scope, receive, send)
                return
        received = 0
        started = False

        async def capped_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, capped_receive, tracking_send)
        except BodyTooLarge as err:
            if started:
                raise
            await too_large(err.limit)(scope, receive, send)
