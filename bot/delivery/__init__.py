"""Delivery: everything the bot says in Slack goes through here, from a typed post to the Slack call.

posts.py names the six posts, queue.py stores them in the outbox (the only writer), roots.py edits the message a
thread hangs off, and the poster (poster.py, with one sender module per Slack method) makes the calls.
"""

from bot.delivery.posts import (
           PRIORITY_REFRESH,
           PRIORITY_REPORT,
           PRIORITY_ROOT,
           Edit,
           Post,
           Reply,
           Report,
           Root,
           Upload,
           View,
)
from bot.delivery.queue import due_now, find, queue, take_back, thread_under

__all__ = ["PRIORITY_REFRESH", "PRIORITY_REPORT", "PRIORITY_ROOT", "Edit", "Post", "Reply", "Report", "Root", "Upload",
           "View", "due_now", "find", "queue", "take_back", "thread_under"]
