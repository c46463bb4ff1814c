"""Slack's Block Kit limits and a validator that applies them the way the Web API does.

Documented limits come from Slack's Block Kit reference; where Slack's behaviour is not documented (the total
blocks size, messages for unknown types), the checks err on the strict side, so blocks that pass here have a margin
against Slack. Errors read like Slack's: ``[ERROR] ... [json-pointer:/blocks/0/text]``.
"""

from __future__ import annotations

import json
from typing import Any

JSON = dict[str, Any]

# Documented Block Kit limits (docs.slack.dev "Blocks" / "Block elements" / "Composition objects").
MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
MAX_SECTION_TEXT = 3000
MAX_SECTION_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_HEADER_TEXT = 150
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_URL = 3000
MAX_ID = 255
MAX_ALT_TEXT = 2000
MAX_MARKDOWN_BLOCK_TEXT = 12000
MAX_OPTION_TEXT = 75
MAX_OPTION_VALUE = 150
MAX_PLACEHOLDER = 150
MAX_VIEW_TITLE = 24
# The confirm object (a dialog before an interactive element acts): title, text, and its two buttons.
MAX_CONFIRM_TITLE = 100
MAX_CONFIRM_TEXT = 300
MAX_CONFIRM_BUTTON = 30
MAX_PRIVATE_METADATA = 3000
# Message text: documented as 40,000 characters. Slack staff said in 2024 (seratch/ChatGPT-in-Slack#102) that the
# platform now rejects shorter texts with msg_too_long; the limit is configurable for that reason.
DEFAULT_MAX_TEXT = 40_000
# Undocumented: bolt-js#2509 saw msg_blocks_too_long at 13,172-13,297 characters. We measure the compact JSON of
# the blocks, which is a little stricter than counting text alone.
DEFAULT_MAX_BLOCKS_JSON = 13_200
RESPONSE_URL_MAX_USES = 5
RESPONSE_URL_TTL = 30 * 60.0

MESSAGE_BLOCK_TYPES = frozenset(
    {
        "actions",
        "context",
        "context_actions",
        "divider",
        "file",
        "header",
        "image",
        "input",
        "markdown",
        "rich_text",
        "section",
        "table",
        "video",
    }
)
ELEMENT_TYPES = frozenset(
    {
        "button",
        "channels_select",
        "checkboxes",
        "conversations_select",
        "datepicker",
        "datetimepicker",
        "email_text_input",
        "external_select",
        "file_input",
        "image",
        "multi_channels_select",
        "multi_conversations_select",
        "multi_external_select",
        "multi_static_select",
        "multi_users_select",
        "number_input",
        "overflow",
        "plain_text_input",
        "radio_buttons",
        "rich_text_input",
        "static_select",
        "timepicker",
        "url_text_input",
        "users_select",
        "workflow_button",
    }
)


# Block Kit validation
# --------------------------------------------------------------------------------------------------------------


class BlockChecker:
    """Collects Slack-style validation messages (without the ``[ERROR]`` tag) for a list of blocks."""

    def __init__(self, allowed_types: frozenset[str]) -> None:
        self.errors: list[str] = []
        self.allowed_types = allowed_types
        self.block_ids: set[str] = set()
        self.markdown_total = 0

    def add(self, message: str, pointer: str) -> None:
        self.errors.append(f"{message} [json-pointer:{pointer}]")

    def text_object(self, obj: Any, ptr: str, *, max_len: int, plain_only: bool = False, required: bool = True) -> None:
        if obj is None:
            if required:
                self.add(f"missing required field: {ptr.rsplit('/', 1)[-1]}", ptr.rsplit("/", 1)[0] or "/")
            return
        if not isinstance(obj, dict):
            self.add("must provide an object", ptr)
            return
        allowed = ("plain_text",) if plain_only else ("plain_text", "mrkdwn")
        if obj.get("type") not in allowed:
            self.add("failed to match all allowed schemas", ptr)
            self.add(f"must be one of: {', '.join(allowed)}", f"{ptr}/type")
            return
        text = obj.get("text")
        if not isinstance(text, str):
            self.add("missing required field: text", ptr)
            return
        if not text:
            self.add("failed to match all allowed schemas", ptr)
            self.add("must be more than 0 characters", f"{ptr}/text")
        elif len(text) > max_len:
            self.add("failed to match all allowed schemas", ptr)
            self.add(f"must be less than {max_len + 1} characters", f"{ptr}/text")

    def string(self, value: Any, ptr: str, *, max_len: int, required: bool = False) -> None:
        if value is None:
            if required:
                self.add(f"missing required field: {ptr.rsplit('/', 1)[-1]}", ptr.rsplit("/", 1)[0])
            return
        if not isinstance(value, str):
            self.add("must be a string", ptr)
        elif len(value) > max_len:
            self.add(f"must be less than {max_len + 1} characters", ptr)
        elif required and not value:
            self.add("must be more than 0 characters", ptr)

    def items(self, value: Any, ptr: str, *, max_items: int, min_items: int = 1) -> list[Any]:
        if not isinstance(value, list):
            self.add("must provide an array", ptr)
            return []
        if len(value) > max_items:
            self.add(f"no more than {max_items} items allowed", ptr)
            return []
        if len(value) < min_items:
            self.add(f"must provide at least {min_items} items", ptr)
        return value

    def blocks(self, blocks: Any, ptr: str, *, max_blocks: int) -> None:
        items = self.items(blocks, ptr, max_items=max_blocks, min_items=0)
        for i, block in enumerate(items):
            self.block(block, f"{ptr}/{i}")

    def kind(self, obj: Any, ptr: str, allowed: frozenset[str]) -> str | None:
        """The `type` of a block or an element, or None (and the problem added) when it has none Slack takes."""
        if not isinstance(obj, dict):
            self.add("must provide an object", ptr)
            return None
        kind = obj.get("type")
        if not isinstance(kind, str):
            self.add("missing required field: type", ptr)
            return None
        if kind not in allowed:
            self.add(f"unsupported type: {kind}", f"{ptr}/type")
            return None
        return kind

    def block(self, block: Any, ptr: str) -> None:
        kind = self.kind(block, ptr, self.allowed_types)
        if kind is None:
            return
        block_id = block.get("block_id")
        if block_id is not None:
            self.string(block_id, f"{ptr}/block_id", max_len=MAX_ID)
            if isinstance(block_id, str):
                if block_id in self.block_ids:
                    self.add(f"duplicate block_id: {block_id}", f"{ptr}/block_id")
                self.block_ids.add(block_id)
        check = getattr(self, f"_block_{kind}", None)
        if check is not None:
            check(block, ptr)

    def _block_section(self, block: JSON, ptr: str) -> None:
        text, fields = block.get("text"), block.get("fields")
        if text is None and fields is None:
            self.add("must provide either text or fields", ptr)
        if text is not None:
            self.text_object(text, f"{ptr}/text", max_len=MAX_SECTION_TEXT)
        if fields is not None:
            for i, item in enumerate(self.items(fields, f"{ptr}/fields", max_items=MAX_SECTION_FIELDS)):
                self.text_object(item, f"{ptr}/fields/{i}", max_len=MAX_FIELD_TEXT)
        if block.get("accessory") is not None:
            self.element(block["accessory"], f"{ptr}/accessory")

    def _block_header(self, block: JSON, ptr: str) -> None:
        self.text_object(block.get("text"), f"{ptr}/text", max_len=MAX_HEADER_TEXT, plain_only=True)

    def _block_context(self, block: JSON, ptr: str) -> None:
        elements = self.items(block.get("elements"), f"{ptr}/elements", max_items=MAX_CONTEXT_ELEMENTS)
        for i, element in enumerate(elements):
            sub = f"{ptr}/elements/{i}"
            if isinstance(element, dict) and element.get("type") == "image":
                self._image_fields(element, sub)
            else:
                self.text_object(element, sub, max_len=MAX_SECTION_TEXT)

    def _block_actions(self, block: JSON, ptr: str) -> None:
        elements = self.items(block.get("elements"), f"{ptr}/elements", max_items=MAX_ACTIONS_ELEMENTS)
        for i, element in enumerate(elements):
            self.element(element, f"{ptr}/elements/{i}")

    def _block_image(self, block: JSON, ptr: str) -> None:
        self._image_fields(block, ptr)
        if block.get("title") is not None:
            self.text_object(block["title"], f"{ptr}/title", max_len=MAX_ALT_TEXT, plain_only=True)

    def _block_markdown(self, block: JSON, ptr: str) -> None:
        text = block.get("text")
        self.string(text, f"{ptr}/text", max_len=MAX_MARKDOWN_BLOCK_TEXT, required=True)
        # The 12,000 limit is cumulative over all markdown blocks of one payload.
        if isinstance(text, str):
            self.markdown_total += len(text)
            if self.markdown_total > MAX_MARKDOWN_BLOCK_TEXT >= self.markdown_total - len(text):
                self.add(f"markdown blocks must total less than {MAX_MARKDOWN_BLOCK_TEXT + 1} characters", ptr)

    def _block_rich_text(self, block: JSON, ptr: str) -> None:
        self.items(block.get("elements"), f"{ptr}/elements", max_items=1000)

    def _block_input(self, block: JSON, ptr: str) -> None:
        self.text_object(block.get("label"), f"{ptr}/label", max_len=MAX_ALT_TEXT, plain_only=True)
        if block.get("element") is None:
            self.add("missing required field: element", ptr)
        else:
            self.element(block["element"], f"{ptr}/element")

    def _image_fields(self, obj: JSON, ptr: str) -> None:
        if obj.get("image_url") is None and obj.get("slack_file") is None:
            self.add("must provide either image_url or slack_file", ptr)
        self.string(obj.get("image_url"), f"{ptr}/image_url", max_len=MAX_URL)
        self.string(obj.get("alt_text"), f"{ptr}/alt_text", max_len=MAX_ALT_TEXT, required=True)

    def confirm(self, obj: Any, ptr: str) -> None:
        if not isinstance(obj, dict):
            self.add("must provide an object", ptr)
            return
        self.text_object(obj.get("title"), f"{ptr}/title", max_len=MAX_CONFIRM_TITLE, plain_only=True)
        self.text_object(obj.get("text"), f"{ptr}/text", max_len=MAX_CONFIRM_TEXT)
        self.text_object(obj.get("confirm"), f"{ptr}/confirm", max_len=MAX_CONFIRM_BUTTON, plain_only=True)
        self.text_object(obj.get("deny"), f"{ptr}/deny", max_len=MAX_CONFIRM_BUTTON, plain_only=True)
        if obj.get("style") is not None and obj["style"] not in ("primary", "danger"):
            self.add("must be one of: primary, danger", f"{ptr}/style")

    def element(self, element: Any, ptr: str) -> None:
        kind = self.kind(element, ptr, ELEMENT_TYPES)
        if kind is None:
            return
        self.string(element.get("action_id"), f"{ptr}/action_id", max_len=MAX_ID)
        if kind == "image":
            self._image_fields(element, ptr)
            return
        if kind == "button":
            self.text_object(element.get("text"), f"{ptr}/text", max_len=MAX_BUTTON_TEXT, plain_only=True)
            self.string(element.get("value"), f"{ptr}/value", max_len=MAX_BUTTON_VALUE)
            self.string(element.get("url"), f"{ptr}/url", max_len=MAX_URL)
            style = element.get("style")
            if style is not None and style not in ("primary", "danger"):
                self.add("must be one of: primary, danger", f"{ptr}/style")
        if element.get("confirm") is not None:
            self.confirm(element["confirm"], f"{ptr}/confirm")
        if element.get("placeholder") is not None:
            self.text_object(element["placeholder"], f"{ptr}/placeholder", max_len=MAX_PLACEHOLDER, plain_only=True)
        if element.get("options") is not None:
            for i, option in enumerate(self.items(element["options"], f"{ptr}/options", max_items=100)):
                sub = f"{ptr}/options/{i}"
                if not isinstance(option, dict):
                    self.add("must provide an object", sub)
                    continue
                self.text_object(option.get("text"), f"{sub}/text", max_len=MAX_OPTION_TEXT)
                self.string(option.get("value"), f"{sub}/value", max_len=MAX_OPTION_VALUE)


def validate_blocks(blocks: Any, *, pointer: str = "/blocks", max_blocks: int = MAX_MESSAGE_BLOCKS) -> list[str]:
    """Slack-style messages (no ``[ERROR]`` tag) for everything wrong with ``blocks``; empty when valid."""
    checker = BlockChecker(MESSAGE_BLOCK_TYPES)
    checker.blocks(blocks, pointer, max_blocks=max_blocks)
    return checker.errors


def blocks_json_size(blocks: list[JSON]) -> int:
    """The size measured against the ``msg_blocks_too_long`` threshold."""
    return len(json.dumps(blocks, ensure_ascii=False, separators=(",", ":")))


# --------------------------------------------------------------------------------------------------------------
