"""The Slack app manifests declare exactly what the bot registers and calls.

Registrations are read from the source (every module in bot/ that imports slack_bolt): `app.command(...)`,
`app.shortcut / message_shortcut / global_shortcut(...)`, `app.event(...)`, `app.action(...)`,
`app.view(...)`, with string literals or module constants (also through `from bot import x as y`).
Scopes are derived from the Slack Web API methods the code in bot/ calls on a WebClient, through a table
of each method's required bot scope: a method missing from the table fails the test until it is added.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.support import REPO, SLACK, load_yaml

HTTP_MANIFEST = SLACK / "manifest.yaml"
SOCKET_MANIFEST = SLACK / "manifest.socket-mode.yaml"
BOT = REPO / "bot"
ENDPOINT = "/slack/events"

# Bot-token scope each Web API method needs (api.slack.com/methods); an empty set: none.
SCOPES_BY_METHOD: dict[str, set[str]] = {
    "auth.test": set(),
    "chat.postMessage": {"chat:write"},
    "chat.update": {"chat:write"},
    "chat.delete": {"chat:write"},
    "chat.postEphemeral": {"chat:write"},
    "chat.scheduleMessage": {"chat:write"},
    "chat.getPermalink": set(),
    "files.getUploadURLExternal": {"files:write"},
    "files.completeUploadExternal": {"files:write"},
    "files.upload.v2": {"files:write"},  # WebClient.files_upload_v2: the two calls above
    "files.info": {"files:read"},
    "views.open": set(),
    "views.publish": set(),
    "views.update": set(),
    "views.push": set(),
    "users.info": {"users:read"},
    "users.lookupByEmail": {"users:read", "users:read.email"},
    "conversations.info": {"channels:read"},
    "conversations.history": {"channels:history"},
    "conversations.replies": {"channels:history"},
    "conversations.join": {"channels:join"},
    "reactions.add": {"reactions:write"},
    "reactions.remove": {"reactions:write"},
    "pins.add": {"pins:write"},
    "apps.connections.open": set(),  # the app-level token (connections:write), not a bot scope
}
# Scopes an event subscription needs.
SCOPES_BY_EVENT: dict[str, set[str]] = {
    "app_home_opened": set(),
    "app_mention": {"app_mentions:read"},
    "message.channels": {"channels:history"},
    "message.groups": {"groups:history"},
    "message.im": {"im:history"},
    "reaction_added": {"reactions:read"},
}
_LISTENERS = {"command", "shortcut", "message_shortcut", "global_shortcut", "event", "action", "block_action",
              "view", "view_submission", "view_closed", "options", "block_suggestion", "message"}


@dataclass
class Registrations:
    commands: set[str] = field(default_factory=set)
    shortcuts: dict[str, str] = field(default_factory=dict)  # callback_id -> "message" | "global" | "any"
    events: set[str] = field(default_factory=set)
    interactive: int = 0  # actions, views, options, shortcuts
    messages: int = 0
    unresolved: list[str] = field(default_factory=list)


def _module_constants(path: Path) -> dict[str, Any]:
    """Module-level NAME = <literal> assignments."""
    constants: dict[str, Any] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for target in targets:
            if isinstance(target, ast.Name) and value is not None:
                try:
                    constants[target.id] = ast.literal_eval(value)
                except ValueError:
                    continue
    return constants


def _module_file(module: str) -> Path | None:
    path = REPO / (module.replace(".", "/") + ".py")
    return path if path.is_file() else None


class _Resolver:
    """Turns a listener's first argument into a value: literals, module constants, imported constants."""

    def __init__(self, path: Path, tree: ast.Module) -> None:
        self.constants = _module_constants(path)
        self.modules: dict[str, str] = {}  # local alias -> module
        self.names: dict[str, tuple[str, str]] = {}  # local name -> (module, name)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    local = alias.asname or alias.name
                    if _module_file(f"{node.module}.{alias.name}"):
                        self.modules[local] = f"{node.module}.{alias.name}"
                    else:
                        self.names[local] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.modules[alias.asname or alias.name] = alias.name

    def _imported(self, module: str, name: str) -> Any:
        path = _module_file(module)
        return _module_constants(path).get(name) if path else None

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.constants:
                return self.constants[node.id]
            if node.id in self.names:
                return self._imported(*self.names[node.id])
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.modules:
            return self._imported(self.modules[node.value.id], node.attr)
        if isinstance(node, ast.Dict):
            keys = [self.value(k) if k is not None else None for k in node.keys]
            return {k: self.value(v) for k, v in zip(keys, node.values, strict=True)}
        return None


def _bolt_sources() -> list[Path]:
    return [p for p in sorted(BOT.rglob("*.py"))
            if re.search(r"^\s*(from|import) slack_bolt\b", p.read_text(encoding="utf-8"), re.M)]


def registrations() -> Registrations:
    found = Registrations()
    for path in _bolt_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        resolve = _Resolver(path, tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _LISTENERS and node.args):
                continue
            kind, arg = node.func.attr, node.args[0]
            value = resolve.value(arg)
            where = f"{path.relative_to(REPO)}:{node.lineno} {kind}({ast.unparse(arg)})"
            if kind == "message":
                found.messages += 1
            elif kind in ("action", "block_action", "view", "view_submission", "view_closed", "options",
                          "block_suggestion"):
                found.interactive += 1
            elif kind == "command":
                if isinstance(value, str):
                    found.commands.add(value)
                else:
                    found.unresolved.append(where)
            elif kind == "event":
                event = value.get("type") if isinstance(value, dict) else value
                if isinstance(event, str):
                    found.events.add(event)
                else:
                    found.unresolved.append(where)
            else:  # shortcuts
                found.interactive += 1
                callback = value.get("callback_id") if isinstance(value, dict) else value
                shape = {"message_shortcut": "message", "global_shortcut": "global"}.get(kind, "any")
                if isinstance(value, dict) and value.get("type") in ("message_action", "shortcut"):
                    shape = "message" if value["type"] == "message_action" else "global"
                if isinstance(callback, str):
                    found.shortcuts[callback] = shape
                else:
                    found.unresolved.append(where)
    return found


def _web_api_methods() -> dict[str, list[str]]:
    """Slack Web API method -> where bot/ calls it (WebClient methods by attribute, and api_call("...")."""
    from slack_sdk import WebClient

    client_methods = {n for n in dir(WebClient) if not n.startswith("_") and "_" in n
                      and callable(getattr(WebClient, n))} - {"api_call"}
    calls: dict[str, list[str]] = {}
    for path in sorted(BOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            attr = node.func.attr
            if attr in client_methods:
                method = "files.upload.v2" if attr == "files_upload_v2" else attr.replace("_", ".")
                calls.setdefault(method, []).append(where)
            elif attr == "api_call" and node.args and isinstance(node.args[0], ast.Constant):
                calls.setdefault(str(node.args[0].value), []).append(where)
        # bolt's say() posts with chat.postMessage
        if re.search(r"\bsay\(", path.read_text(encoding="utf-8")) and path in _bolt_sources():
            calls.setdefault("chat.postMessage", []).append(f"{path.relative_to(REPO)} say()")
    return calls


def _manifest(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = load_yaml(path)
    return doc


def _declared(manifest: dict[str, Any]) -> tuple[set[str], dict[str, str], set[str], set[str]]:
    features = manifest.get("features") or {}
    commands = {c["command"] for c in features.get("slash_commands") or []}
    shortcuts = {s["callback_id"]: s["type"] for s in features.get("shortcuts") or []}
    events = set((manifest.get("settings") or {}).get("event_subscriptions", {}).get("bot_events") or [])
    scopes = set(manifest["oauth_config"]["scopes"].get("bot") or [])
    return commands, shortcuts, events, scopes


def _needs_registrations() -> Registrations:
    found = registrations()
    if not (BOT / "slack_app.py").exists() and not (found.commands or found.shortcuts or found.events):
        pytest.skip("bot/slack/app.py is not written yet: nothing registers Slack listeners to compare with")
    assert not found.unresolved, ("listener ids the test cannot read (use a string literal or a module "
                                  f"constant): {found.unresolved}")
    assert found.commands or found.shortcuts or found.events, "bot/slack/app.py registers no listener?"
    return found


@pytest.mark.parametrize("path", [HTTP_MANIFEST, SOCKET_MANIFEST], ids=["http", "socket-mode"])
def test_manifest_declares_exactly_the_registered_listeners(path: Path) -> None:
    found = _needs_registrations()
    commands, shortcuts, events, _ = _declared(_manifest(path))
    assert commands == found.commands, "slash commands in the manifest vs registered in bot/"
    assert set(shortcuts) == set(found.shortcuts), "shortcut callback ids in the manifest vs registered"
    for callback, shape in found.shortcuts.items():
        if shape != "any":
            assert shortcuts[callback] == shape, f"shortcut {callback} is a {shape} shortcut"
    expected_events = set(found.events)
    if found.messages:
        assert any(e.startswith("message.") for e in events), "app.message() needs a message.* event"
        expected_events |= {e for e in events if e.startswith("message.")}
    assert events == expected_events, "bot events in the manifest vs app.event() registrations"


@pytest.mark.parametrize("path", [HTTP_MANIFEST, SOCKET_MANIFEST], ids=["http", "socket-mode"])
def test_interactivity_and_app_home_match_the_code(path: Path) -> None:
    found = _needs_registrations()
    manifest = _manifest(path)
    assert manifest["settings"]["interactivity"]["is_enabled"] is bool(found.interactive)
    home = "app_home_opened" in found.events or "views.publish" in _web_api_methods()
    assert manifest["features"]["app_home"]["home_tab_enabled"] is home


def _required_scopes(found: Registrations | None, manifest: dict[str, Any]) -> tuple[set[str], list[str]]:
    required: set[str] = set()
    unknown = []
    for method, where in sorted(_web_api_methods().items()):
        if method not in SCOPES_BY_METHOD:
            unknown.append(f"{method} ({where[0]})")
            continue
        required |= SCOPES_BY_METHOD[method]
    commands, shortcuts, events, _ = _declared(manifest)
    if found is not None:
        # app.message() listeners receive the manifest's message.* events (the listener test checks there are some).
        messages = {e for e in events if e.startswith("message.")} if found.messages else set()
        commands, shortcuts, events = found.commands, dict(found.shortcuts), found.events | messages
    if commands or shortcuts:
        required.add("commands")
    for event in events:
        assert event in SCOPES_BY_EVENT, f"add event {event} and its scopes to SCOPES_BY_EVENT"
        required |= SCOPES_BY_EVENT[event]
    return required, unknown


@pytest.mark.parametrize("path", [HTTP_MANIFEST, SOCKET_MANIFEST], ids=["http", "socket-mode"])
def test_scopes_cover_every_web_api_call(path: Path) -> None:
    """Runs with or without bot/slack/app.py: the scopes must cover what bot/ calls today."""
    manifest = _manifest(path)
    required, unknown = _required_scopes(None, manifest)
    assert not unknown, f"Web API methods without a scope entry in SCOPES_BY_METHOD: {unknown}"
    declared = _declared(manifest)[3]
    assert required <= declared, f"scopes missing from {path.name}: {sorted(required - declared)}"
    assert {"chat.postMessage", "chat.update", "files.completeUploadExternal"} <= set(_web_api_methods()), \
        "scan found nothing"


@pytest.mark.parametrize("path", [HTTP_MANIFEST, SOCKET_MANIFEST], ids=["http", "socket-mode"])
def test_scopes_are_exactly_what_the_bot_needs(path: Path) -> None:
    found = _needs_registrations()
    manifest = _manifest(path)
    required, unknown = _required_scopes(found, manifest)
    assert not unknown, f"Web API methods without a scope entry in SCOPES_BY_METHOD: {unknown}"
    assert _declared(manifest)[3] == required


def _strip_mode(manifest: dict[str, Any]) -> dict[str, Any]:
    stripped: dict[str, Any] = copy.deepcopy(manifest)
    for command in stripped["features"].get("slash_commands") or []:
        command.pop("url", None)
    settings = stripped["settings"]
    settings.get("event_subscriptions", {}).pop("request_url", None)
    settings.get("interactivity", {}).pop("request_url", None)
    settings.pop("socket_mode_enabled")
    return stripped


def test_the_two_manifests_differ_only_in_transport() -> None:
    http, socket = _manifest(HTTP_MANIFEST), _manifest(SOCKET_MANIFEST)
    assert http["settings"]["socket_mode_enabled"] is False
    assert socket["settings"]["socket_mode_enabled"] is True
    assert _strip_mode(http) == _strip_mode(socket)


def test_http_manifest_sends_everything_to_the_one_endpoint() -> None:
    manifest = _manifest(HTTP_MANIFEST)
    urls = [c["url"] for c in manifest["features"]["slash_commands"]]
    urls += [manifest["settings"]["event_subscriptions"]["request_url"],
             manifest["settings"]["interactivity"]["request_url"]]
    assert len(set(urls)) == 1 and urls[0].startswith("https://") and urls[0].endswith(ENDPOINT), urls


def test_socket_manifest_has_no_request_urls() -> None:
    manifest = _manifest(SOCKET_MANIFEST)
    assert "://" not in repr(manifest["features"]) + repr(manifest["settings"])
    assert not any("url" in c for c in manifest["features"].get("slash_commands") or [])
    assert "request_url" not in manifest["settings"].get("event_subscriptions", {})


def test_manifest_fields_are_within_slacks_limits() -> None:
    for path in (HTTP_MANIFEST, SOCKET_MANIFEST):
        manifest = _manifest(path)
        info = manifest["display_information"]
        assert 1 <= len(info["name"]) <= 35 and len(info.get("description", "")) <= 140
        assert 175 <= len(info.get("long_description", "x" * 175)) <= 4000
        assert re.fullmatch(r"#[0-9a-fA-F]{6}", info.get("background_color", "#000000"))
        for command in manifest["features"]["slash_commands"]:
            assert re.fullmatch(r"/[a-z0-9_-]{1,31}", command["command"]) and len(command["description"]) <= 2000
        for shortcut in manifest["features"]["shortcuts"]:
            assert shortcut["type"] in ("message", "global") and len(shortcut["description"]) <= 150
            assert re.fullmatch(r"[a-z0-9_.-]{1,255}", shortcut["callback_id"])
        assert manifest["features"]["bot_user"]["display_name"]
