"""A file into a Slack thread in Slack's own three steps, with a checkpoint before the step that makes it visible.

`files_upload_v2` of slack_sdk runs files.getUploadURLExternal, a POST of the bytes to the URL it returned, and
files.completeUploadExternal (which shares the file into the channel or thread) in one call. A process killed after
Slack shared the file and before the outbox recorded it cannot tell, on restart, whether to upload again: a file
carries no message metadata. So the poster runs the steps itself and records the file's id (`before_share`) just
before the share; the attempt after a crash looks for that id among the thread's messages (`shared_in`). Before
that checkpoint nothing is visible in Slack, so uploading again from the start is safe.
"""

from __future__ import annotations

import logging
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from slack_sdk import WebClient

log = logging.getLogger("triagebot.uploads")

MAX_ALT_TXT = 1000  # files.getUploadURLExternal's alt_txt ceiling (longer: alt_txt_too_large)


class UploadFailed(Exception):
    """The upload host refused the bytes or could not be reached; the item is retried (and looked for first)."""


def upload_file(client: WebClient, *, channel: str, thread_ts: str | None, filename: str, title: str,
                content: bytes, before_share: Callable[[str], None], initial_comment: str | None = None) -> str:
    """Upload `content` and share it into `channel` (in `thread_ts`'s thread); returns the file's id.

    `before_share(file_id)` runs after the bytes are uploaded and before Slack is asked to share the file; it raises
    to stop (e.g. the caller lost its claim on the work)."""
    file_id = _send_bytes(client, filename, content)
    before_share(file_id)
    client.files_completeUploadExternal(files=[{"id": file_id, "title": title}], channel_id=channel,
                                        thread_ts=thread_ts, initial_comment=initial_comment)
    return file_id


def upload_unshared(client: WebClient, *, filename: str, title: str, content: bytes, alt_text: str) -> str:
    """Upload `content` and complete it without a channel: a file of the bot's own, shown nowhere until a message
    refers to it (an image block's `slack_file`); returns its id. Nothing is visible if a crash comes between the
    steps, so a retry simply uploads again."""
    file_id = _send_bytes(client, filename, content, alt_text=alt_text)
    client.files_completeUploadExternal(files=[{"id": file_id, "title": title}])
    return file_id


def _send_bytes(client: WebClient, filename: str, content: bytes, alt_text: str | None = None) -> str:
    """Steps one and two: a URL for the file, and its bytes there; the file's id."""
    url_response = client.files_getUploadURLExternal(filename=filename, length=len(content),
                                                     alt_txt=alt_text[:MAX_ALT_TXT] if alt_text else None)
    file_id, upload_url = str(url_response["file_id"]), str(url_response["upload_url"])
    _post_bytes(client, upload_url, content)
    return file_id


def _post_bytes(client: WebClient, url: str, content: bytes) -> None:
    """Step two: the bytes to the URL Slack gave, with the client's proxy, TLS context and timeout (as slack_sdk's
    own files_upload_v2 sends them: a plain POST whose body is the file)."""
    handlers: list[Any] = [urllib.request.HTTPSHandler(context=client.ssl)]
    if client.proxy:
        handlers.append(urllib.request.ProxyHandler({"http": client.proxy, "https": client.proxy}))
    opener = urllib.request.build_opener(*handlers)
    request = urllib.request.Request(url, data=content, method="POST")
    try:
        with opener.open(request, timeout=client.timeout) as response:
            status = response.status
            body = response.read(200).decode("utf-8", "replace")
    except OSError as err:  # URLError, HTTPError, timeouts
        raise UploadFailed(f"upload of the file's bytes failed: {err}") from err
    if status != 200:
        raise UploadFailed(f"upload of the file's bytes answered HTTP {status}: {body}")


def shared_in(message: Mapping[str, Any], file_id: str) -> bool:
    """Whether a message from conversations.history/replies is the share of file `file_id`."""
    return any(isinstance(f, Mapping) and f.get("id") == file_id for f in message.get("files") or [])
