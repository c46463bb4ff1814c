"""Alert routing (labels -> channel) and permissions (channel or user -> namespaces), as plain data."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, Field, field_validator

from collectors.models import Target


class Route(BaseModel):
    """Alerts whose labels all match go to `channel`. A value starting with `~` is a full-match regex."""

    match: dict[str, str] = Field(default_factory=dict)
    channel: str

    @field_validator("match")
    @classmethod
    def _regexes_compile(cls, value: dict[str, str]) -> dict[str, str]:
        for label, pattern in value.items():
            if pattern.startswith("~"):
                try:
                    re.compile(pattern[1:])
                except re.error as err:
                    raise ValueError(f"route regex for {label!r} does not compile: {err}") from None
        return value

    def matches(self, labels: Mapping[str, str]) -> bool:
        for label, pattern in self.match.items():
            value = labels.get(label, "")
            if pattern.startswith("~"):
                if re.fullmatch(pattern[1:], value) is None:
                    return False
            elif value != pattern:
                return False
        return True


def route_channel(routes: list[Route], default: str | None, labels: Mapping[str, str]) -> str | None:
    """The first matching route's channel, else the default (None: nowhere to post)."""
    return next((r.channel for r in routes if r.matches(labels)), default)


class Permissions(BaseModel):
    """Who may triage which namespaces. "*" allows every namespace. Nothing configured allows nothing."""

    channels: dict[str, list[str]] = Field(default_factory=dict)
    users: dict[str, list[str]] = Field(default_factory=dict)

    def allowed(self, namespace: str, *, channel: str | None = None, user: str | None = None) -> bool:
        granted = self.channels.get(channel or "", []) + self.users.get(user or "", [])
        return "*" in granted or namespace in granted

    def allowed_scope(self, namespace: str | None, *, channel: str | None = None, user: str | None = None) -> bool:
        """`allowed` for a triage target; a cluster-scoped one (a node: `namespace` None) reads pods, events and
        logs of every namespace it touches, so it needs "*"."""
        if namespace is None:
            granted = self.channels.get(channel or "", []) + self.users.get(user or "", [])
            return "*" in granted
        return self.allowed(namespace, channel=channel, user=user)

    def refusal(self, namespace: str | None, *, channel: str | None = None, user: str | None = None) -> str:
        """Why `allowed_scope(namespace, ...)` said no."""
        where = f"this channel ({channel or '-'}) or to you ({user or '-'})"
        if namespace is None:
            return (f'Not allowed: this target is cluster-scoped (a node\'s triage reads every namespace on it), which '
                    f'needs "*" granted to {where}. Ask an admin to add it under `permissions` in triagebot\'s config.')
        return (f"Not allowed: namespace {namespace!r} is not granted to {where}. Ask an admin to add it under "
                f"`permissions` in triagebot's config.")


    def alert_refusal(self, namespace: str | None, node: str | None, *, channel: str) -> str:
        """Why an alert routed to `channel` is not triaged (`allowed_scope` said no), in one line that names the
        setting to change: it is shown on the alert's root and logged."""
        if channel not in self.channels:
            return f"channel {channel} has no permission entry; set TRIAGEBOT_PERMISSIONS (permissions.channels)"
        if namespace is None:
            return (f'node {node or "?"} is cluster-scoped (its triage reads every namespace on it) and needs "*" '
                    f"granted to channel {channel} in TRIAGEBOT_PERMISSIONS (permissions.channels)")
        return (f"namespace {namespace} is not granted to channel {channel}; add it in TRIAGEBOT_PERMISSIONS "
                "(permissions.channels)")


def is_node(target: Target) -> bool:
    """Whether the target is a node itself (`node/NAME`), not a pod or workload that merely runs on one."""
    return (target.service or "").startswith("node/") or bool(target.node and not (target.service or target.pod))


def scope(target: Target) -> str | None:
    """The namespace a triage of `target` (or an action on it) is checked against; None for a node, or an alert
    that names no namespace: cluster-scoped, so `Permissions.allowed_scope` asks for "*"."""
    return None if is_node(target) else target.namespace
