"""Kubelet and controller messages that say why a pod cannot start or a node is not ready, normalised.

Pure string classifiers shared by the events, object, describe and kubelet parsers, so one wording is read
one way everywhere. Each returns what the message shows and nothing when it shows nothing it knows.
"""

from __future__ import annotations

import re

# ---- volumes (FailedMount, FailedAttachVolume) --------------------------------------------------------

_VOLUME_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("multi-attach", re.compile(r"Multi-Attach error")),
    ("csi-driver-missing", re.compile(r"not found in the list of registered CSI drivers")),
    ("pvc-not-found", re.compile(r"persistentvolumeclaim \"[^\"]+\" not found", re.I)),
    ("secret-not-found", re.compile(r"\bsecrets? \"[^\"]+\" not found")),
    ("configmap-not-found", re.compile(r"\bconfigmaps? \"[^\"]+\" not found")),
    ("attach-failed", re.compile(r"AttachVolume\.Attach failed|timed out waiting for external-attacher")),
    ("mount-timeout", re.compile(r"Unable to attach or mount volumes.*timed out waiting for the condition"
                                 r"|Unable to attach or mount volumes.*context deadline exceeded")),
    ("mount-failed", re.compile(r"MountVolume\.\w+ failed|mount failed: |MapVolume\.\w+ failed")),
)
# A MountVolume.SetUp failure that only says the Secret or ConfigMap is missing is not a storage fault.
_OBJECT_ERRORS = frozenset({"secret-not-found", "configmap-not-found"})


def volume_errors(message: str) -> list[str]:
    """Normalised volume failures named by one FailedMount/FailedAttachVolume message."""
    found = [name for name, rx in _VOLUME_RULES if rx.search(message)]
    if _OBJECT_ERRORS.intersection(found) and "mount-failed" in found:
        found.remove("mount-failed")
    return found


# ---- Secrets and ConfigMaps a pod needs (CreateContainerConfigError, volume set-up) ----------------------

_MISSING_REF = re.compile(r"\b(secret|configmap)s? \\?\"([a-z0-9][a-z0-9.\-]*)\\?\" not found"
                          r"|couldn't find key \S+ in (Secret|ConfigMap) [a-z0-9\-]+/([a-z0-9][a-z0-9.\-]*)", re.I)


def missing_refs(message: str) -> list[str]:
    """`secret/name` and `configmap/name` for every object the message says does not exist."""
    out: list[str] = []
    for m in _MISSING_REF.finditer(message):
        kind, name = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        ref = f"{kind.lower()}/{name}"
        if ref not in out:
            out.append(ref)
    return out


# ---- the pod sandbox (FailedCreatePodSandBox, NetworkNotReady) -----------------------------------------------

_IP_EXHAUSTED = re.compile(
    r"failed to allocate for range|no IP addresses available in range|failed to assign an IP address"
    r"|no available IP|No available addresses|IP address pool exhausted|ipam.{0,80}exhausted"
    r"|InsufficientCidrBlocks|range is full", re.I)
_CNI_NOT_READY = re.compile(r"cni config uninitiali[sz]ed|NetworkPluginNotReady|cni plugin not initiali[sz]ed"
                            r"|network plugin is not ready|NetworkReady=false", re.I)
_CNI = re.compile(r"failed to setup network for sandbox|failed to set up sandbox container .{0,80}network"
                  r"|plugin type=\"\w+\"|\bCNI\b|networkPlugin cni failed", re.I)


def sandbox_errors(message: str) -> list[str]:
    """What a pod-sandbox failure shows: the pod network could not get an address, is not set up, or else."""
    if _IP_EXHAUSTED.search(message):
        return ["ip-exhausted"]
    if _CNI_NOT_READY.search(message):
        return ["cni-not-ready"]
    if _CNI.search(message):
        return ["cni-error"]
    if "sandbox" in message.lower():
        return ["runtime-error"]
    return []


# ---- image pulls that succeed slowly (Pulled) ------------------------------------------------------------------

_PULLED_IN = re.compile(r"Successfully pulled image .*? in ((?:\d+(?:\.\d+)?(?:h|ms|m|s|µs|us|ns))+)")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|µs|us|ns)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}


def pull_seconds(message: str) -> float | None:
    """Seconds from kubelet's `Successfully pulled image "x" in 4m32.1s (...)`, a Go duration; else None."""
    m = _PULLED_IN.search(message)
    if m is None:
        return None
    total = sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(m.group(1)))
    return round(total, 3)


# ---- node readiness -------------------------------------------------------------------------------------------

_NOT_READY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("kubelet-stopped-posting", re.compile(r"Kubelet stopped posting node status|NodeStatusUnknown")),
    ("pleg-unhealthy", re.compile(r"PLEG is not healthy")),
    ("runtime-down", re.compile(r"container runtime is down|container runtime status check may not have "
                                r"completed|RuntimeReady=false|ContainerRuntimeNotReady"
                                r"|containerd\.sock: connect: connection refused"
                                r"|dockershim\.sock: connect: connection refused")),
    ("network-not-ready", _CNI_NOT_READY),
)


def node_not_ready_reasons(text: str) -> list[str]:
    """Why the kubelet reports (or the control plane marks) a node NotReady, from a condition or log text.

    `KubeletNotReady` is the Ready condition's catch-all reason: it counts only when nothing specific is named.
    """
    found = [name for name, rx in _NOT_READY_RULES if rx.search(text)]
    if not found and "KubeletNotReady" in text:
        found = ["kubelet-not-ready"]
    return found
