"""Routing alerts to channels and permitting namespaces per channel and user."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.policy import Permissions, Route, route_channel, scope
from collectors.models import Target

ROUTES = [Route(match={"namespace": "ml", "severity": "critical"}, channel="C0MLPAGE"),
          Route(match={"namespace": "~ml|training"}, channel="C0ML"),
          Route(match={"alertname": "~DCGM.*|GPU.*"}, channel="C0GPU")]


@pytest.mark.parametrize(("labels", "channel"), [
    ({"namespace": "ml", "severity": "critical"}, "C0MLPAGE"),
    ({"namespace": "ml", "severity": "warning"}, "C0ML"),
    ({"namespace": "training"}, "C0ML"),
    ({"namespace": "mlops"}, "C0DEFAULT"),
    ({"alertname": "GPUXidError", "Hostname": "n"}, "C0GPU"),
    ({}, "C0DEFAULT"),
])
def test_routes(labels: dict[str, str], channel: str) -> None:
    assert route_channel(ROUTES, "C0DEFAULT", labels) == channel


def test_no_default_means_nowhere() -> None:
    assert route_channel([], None, {"namespace": "x"}) is None


def test_bad_regex_is_refused() -> None:
    with pytest.raises(ValidationError, match="does not compile"):
        Route(match={"namespace": "~("}, channel="C")


def test_permissions() -> None:
    perms = Permissions(channels={"C0OPS": ["*"], "C0SHOP": ["shop"]}, users={"U0ALICE": ["ml"]})
    assert perms.allowed("anything", channel="C0OPS")
    assert perms.allowed("shop", channel="C0SHOP") and not perms.allowed("ml", channel="C0SHOP")
    assert perms.allowed("ml", channel="C0SHOP", user="U0ALICE")
    assert not Permissions().allowed("shop", channel="C0SHOP", user="U0ALICE")
    assert "namespace 'ml' is not granted" in perms.refusal("ml", channel="C0SHOP", user="U0BOB")


@pytest.mark.parametrize(("target", "checked"), [
    (Target(service="checkout", namespace="shop"), "shop"),
    (Target(pod="trainer-0", service="pod/trainer-0", namespace="ml"), "ml"),
    # /triage node/gpu-1 carries the default namespace; a node's triage reads every namespace on it.
    (Target(node="gpu-1", service="node/gpu-1", namespace="default"), None),
    (Target(node="gpu-1"), None),
    # A pod (or workload) that runs on a node is not the node: its namespace decides.
    (Target(service="training-job", namespace="ml", pod="training-job-xyz", node="gpu-node-2"), "ml"),
    (Target(pod="trainer-0", namespace="ml", node="gpu-node-2"), "ml"),
    (Target(), None),  # an alert that names no namespace (KubeAPIDown, Watchdog) is cluster-wide
])
def test_scope_of_a_target(target: Target, checked: str | None) -> None:
    assert scope(target) == checked


def test_cluster_scoped_needs_the_star_and_says_so() -> None:
    perms = Permissions(channels={"C0OPS": ["*"], "C0SHOP": ["shop", "default"]})
    assert perms.allowed_scope(None, channel="C0OPS")
    assert not perms.allowed_scope(None, channel="C0SHOP")  # "default" is not "*"
    refusal = perms.refusal(None, channel="C0SHOP", user="U0BOB")
    assert "cluster-scoped" in refusal and '"*"' in refusal and "C0SHOP" in refusal and "U0BOB" in refusal


def test_an_alert_refusal_names_the_channel_and_the_setting() -> None:
    """Issue 28, point 4: the root and the log say why an alert was not triaged, and what to set."""
    nothing = Permissions()
    assert not nothing.allowed_scope("shop", channel="C0OPS")
    assert nothing.alert_refusal("shop", None, channel="C0OPS") == (
        "channel C0OPS has no permission entry; set TRIAGEBOT_PERMISSIONS (permissions.channels)")
    some = Permissions(channels={"C0OPS": ["payments"]})
    assert some.alert_refusal("shop", None, channel="C0OPS") == (
        "namespace shop is not granted to channel C0OPS; add it in TRIAGEBOT_PERMISSIONS (permissions.channels)")
    assert some.alert_refusal(None, "gpu-node-2", channel="C0OPS") == (
        'node gpu-node-2 is cluster-scoped (its triage reads every namespace on it) and needs "*" granted to '
        "channel C0OPS in TRIAGEBOT_PERMISSIONS (permissions.channels)")
