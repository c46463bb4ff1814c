"""Which failed Slack calls are worth another attempt, and which never will be.

One classifier for the poster, so that a failure is retried only when time can fix it. Slack's Web API answers
a refusal with HTTP 200 and `{"ok": false, "error": "..."}`; its method pages (docs.slack.dev/reference/methods/
chat.postMessage and friends, "Errors") list the codes. They fall in three groups:

- the request or the workspace: the channel is gone or closed to the bot, the token or its scopes are wrong, the
  message or the thread does not exist, the arguments are malformed. The same call gets the same answer: dead at
  once, never retried (each retry of a post that may have gone out costs a `conversations.history` lookup, of
  which Slack allows about 50 a minute);
- Slack's own trouble: `ratelimited` (HTTP 429, with Retry-After), `internal_error`, `fatal_error`,
  `service_unavailable`, `request_timeout`, 5xx pages, connection errors. Retried within the outbox's attempt
  budget; where the call may have taken effect (Slack says "some aspect of the operation may have succeeded" for
  `internal_error` and `fatal_error`; a timeout or a 5xx page hides the answer), the retry looks before posting;
- an error code this module does not know: retried within the budget, as Slack may add transient codes.

Our own errors count too: an item whose payload cannot be turned into a call (a KeyError, TypeError or ValueError
from reading it) is permanent, and no Slack call was made, so nothing is looked up.
"""

from __future__ import annotations

import http.client
import re
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError

# Same call, same answer (docs.slack.dev, the "Errors" table of chat.postMessage, chat.update, files.* and the
# common errors of every method).
PERMANENT = frozenset({
    # the channel or thread
    "channel_not_found", "not_in_channel", "is_archived", "thread_not_found", "cannot_reply_to_message",
    "restricted_action", "restricted_action_read_only_channel", "restricted_action_thread_only_channel",
    "restricted_action_non_threadable_channel", "message_not_found", "cant_update_message", "edit_window_closed",
    "ekm_access_denied", "team_access_not_granted", "channel_is_archived",
    # the app, its token and its scopes
    "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "no_permission",
    "missing_scope", "not_allowed_token_type", "org_login_required", "two_factor_setup_required",
    "access_denied", "enterprise_is_restricted", "method_deprecated", "deprecated_endpoint", "user_not_found",
    # the request itself
    "invalid_arguments", "invalid_arg_name", "invalid_array_arg", "invalid_charset", "invalid_form_data",
    "invalid_post_type", "missing_post_type", "no_text", "too_many_attachments", "invalid_attachments",
    "as_user_not_supported", "duplicate_message_not_found",
    # the content, once the poster's plain-text fallback was refused too (bot/delivery/poster.py CONTENT_ERRORS)
    "msg_too_long", "msg_blocks_too_long", "invalid_blocks", "invalid_blocks_format", "invalid_metadata_format",
    "invalid_metadata_schema", "metadata_too_large",
})
# Slack's own trouble, where the call may still have taken effect: look before posting again.
_CODE = re.compile(r"[a-z0-9_.]{1,64}")
MAYBE_DONE = frozenset({"internal_error", "fatal_error", "request_timeout", "service_unavailable"})


@dataclass(frozen=True)
class Failure:
    """What to do about one failed call."""

    error: str  # a short code: Slack's error, http_<status>, or the exception's class
    permanent: bool  # dead now: no retry can succeed
    retry_after: float | None = None  # seconds Slack asked us to wait (429)
    uncertain: bool = False  # the call may have reached Slack: the retry looks for it first


def slack_failure(err: SlackApiError) -> Failure:
    """An answer from Slack (or from what stands in front of it) that was not ok."""
    status = int(getattr(err.response, "status_code", 0) or 0)
    said = str(err.response.get("error") or "")
    # slack_sdk puts a non-JSON page (a proxy's 503) into `error` as prose: name it by its status instead, which
    # also keeps the metric's label values few.
    error = said if _CODE.fullmatch(said) else f"http_{status}"
    retry_after = _seconds((err.response.headers or {}).get("Retry-After")) if status == 429 else None
    if status == 429 or error in ("ratelimited", "rate_limited"):
        return Failure(error, permanent=False, retry_after=retry_after if retry_after is not None else 1.0)
    if status >= 500 or error in MAYBE_DONE:
        return Failure(error, permanent=False, uncertain=True)
    return Failure(error, permanent=error in PERMANENT)


def exception_failure(err: BaseException) -> Failure:
    """A call that got no answer from Slack, or an item that could not be turned into a call."""
    name = type(err).__name__
    if isinstance(err, (OSError, http.client.HTTPException)):  # connection refused or reset, timeouts, DNS
        return Failure(name, permanent=False, uncertain=True)
    if isinstance(err, (KeyError, TypeError, ValueError, AttributeError)):
        # Raised while reading the payload or building the request: nothing reached Slack, and nothing will.
        return Failure(name, permanent=True)
    # Anything else, slack_sdk's SlackRequestError included (it reports a failed file upload's HTTP status as well
    # as bad arguments), is retried within the budget.
    return Failure(name, permanent=False, uncertain=True)


def _seconds(value: object) -> float | None:
    """Retry-After as seconds; None when absent or not a number (an HTTP date is not what Slack sends)."""
    try:
        seconds = float(str(value))
    except ValueError:
        return None
    return seconds if 0 <= seconds < 86_400 else None
