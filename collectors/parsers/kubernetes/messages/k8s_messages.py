"""Kubelet and controller messages that say why a pod cannot start or a node is not ready, normalised.

Pure string classifiers shared by the events, object, describe and kubelet parsers, so one wording is read
one way everywhere. Each returns what the message shows and nothing when it shows nothing it knows.
"""

from __future__ import annotations

import re

from collectors.catalogs.network import sandbox_kinds
from collectors.lazy_regex import LazyPattern

# ---- volumes (FailedMount, FailedAttachVolume) --------------------------------------------------------

_VOLUME_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Its second half alone (the message cut or wrapped after the volume's name) says the same.
    ("multi-attach", re.compile(r"Multi-Attach error|[Vv]olume is already (?:exclusively attached to one node"
                                r"|used by pod\(s\))")),
    ("csi-driver-missing", re.compile(r"not found in the list of registered CSI drivers")),
    ("pvc-not-found", re.compile(r"persistentvolumeclaim \"[^\"]+\" not found", re.I)),
    ("secret-not-found", re.compile(r"\bsecrets? \"[^\"]+\" not found")),
    ("configmap-not-found", re.compile(r"\bconfigmaps? \"[^\"]+\" not found")),
    # The CSI driver refused the attach because its own volume cannot serve yet: Longhorn's "volume <name> [in state
    # <state>] is not ready for workloads" (gRPC Aborted; longhorn/longhorn-manager csi/controller_server.go and
    # csi/node_server.go, v1.1-v1.7), when no replica could be scheduled or the volume is faulted. An attach failure
    # with that reason is the storage system's, not a volume still attached to another node.
    ("volume-not-ready", re.compile(r"\bvolume (?:\S+ )?(?:in state \S+ )?is not ready for workloads")),
    # The external attacher's own error (its VolumeAttachment status.attachError) starts "failed to attach: ".
    ("attach-failed", re.compile(r"AttachVolume\.Attach failed|timed out waiting for external-attacher"
                                 r"|^failed to attach: ")),
    ("mount-timeout", re.compile(r"Unable to attach or mount volumes.*timed out waiting for the condition"
                                 r"|Unable to attach or mount volumes.*context deadline exceeded"
                                 # 1.10-1.16: "Unable to mount volumes for pod ...: timeout expired waiting ..."
                                 r"|timeout expired waiting for volumes to attach")),
    # The CSI mounter could not give the volume the pod's fsGroup (kubernetes pkg/volume/csi/csi_mounter.go,
    # "applyFSGroup failed for vol <id>: <err>", 1.12 on): the mount worked, the securityContext step did not.
    ("fsgroup-failed", re.compile(r"applyFSGroup failed for vol")),
    # The kubelet's Secret/ConfigMap manager no longer (or not yet) tracks the pod's object (pkg/kubelet/util/manager,
    # "object %q/%q not registered", 1.12-1.31): most often the known race after a pod finished (kubernetes#105204),
    # where the projected kube-root-ca.crt is looked up once more. It stops nothing unless the pod never started.
    ("object-not-registered", re.compile(r"\bobject \\?\"[a-z0-9][a-z0-9\-]*\\?\"/\\?\"[^\"\\]+\\?\" not registered")),
    # mount-utils' format-and-mount refusing a damaged file system (k8s.io/mount-utils mount_linux.go
    # checkAndRepairFilesystem, "'fsck' found errors on device <dev> but could not correct them", pkg/util/mount
    # before 1.20) and the in-tree plugins' own words (pkg/volume/iscsi/iscsi_util.go "iscsi: failed to mount iscsi
    # volume", 1.3-1.25): the kubelet logs them before its event says only MountVolume.MountDevice failed.
    ("mount-failed", re.compile(r"MountVolume\.\w+ failed|mount failed: |MapVolume\.\w+ failed"
                                r"|fsck'? found errors on device \S+ but could not correct"
                                r"|\b\w+: failed to mount \w+ volume ")),
)
# A MountVolume.SetUp failure that only says the Secret or ConfigMap is missing is not a storage fault, nor is one
# that says the fsGroup could not be applied (the mount itself succeeded).
_OBJECT_ERRORS = frozenset({"secret-not-found", "configmap-not-found", "fsgroup-failed", "object-not-registered"})


def volume_errors(message: str) -> list[str]:
    """Normalised volume failures named by one FailedMount/FailedAttachVolume message."""
    found = [name for name, rx in _VOLUME_RULES if rx.search(message)]
    if _OBJECT_ERRORS.intersection(found) and "mount-failed" in found:
        found.remove("mount-failed")
    return found


def mount_blocked(errors: list[str]) -> bool:
    """Whether a volume message with these errors shows a mount that failed: the kubelet's "not registered" race
    alone (kubernetes#105204) does not, since it follows pods that already finished."""
    return errors != ["object-not-registered"]


# ---- Secrets and ConfigMaps a pod needs (CreateContainerConfigError, volume set-up) ----------------------

_MISSING_REF = LazyPattern(r"\b(secret|configmap)s? \\?\"([a-z0-9][a-z0-9.\-]*)\\?\" not found"
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


# ---- a container whose process cannot be exec'd (exit 126/127, reason ContainerCannotRun or StartError) -------
# The runtime's words when the entrypoint is missing, not executable or built for another CPU, as the kubelet
# copies them into the Failed event and the terminated state's message:
# - Go's os/exec LookPath, which runc uses for a bare command name: `exec: "x": executable file not found in $PATH`
#   (runc libcontainer/standard_init_linux.go, 1.0-1.2; Docker prefixes "OCI runtime create failed:");
# - runc's execve failure: `exec: "x": stat x: no such file or directory` (1.0), `exec /x: no such file or
#   directory`, `exec /x: permission denied`, `exec /x: exec format error` (1.1-1.2), and `exec user process
#   caused: no such file or directory` / "exec format error" (docker-runc before 1.0);
# - crun src/libcrun/linux.c and container.c (0.x-1.x; crun_make_error appends ": <strerror>"): "executable file
#   `x` not found in $PATH: No such file or directory", "open executable: Permission denied", "exec container
#   process [(missing dynamic library?) ]`/x`: No such file or directory" (or Permission denied, Exec format error,
#   Operation not permitted).
_ENTRYPOINT_FAILED = LazyPattern(
    r"exec(?:ve)?[: ].{0,160}(?:no such file or directory|[Pp]ermission denied)"
    r"|executable file not found in \$PATH|executable file `[^`]{1,200}` not found in \$PATH|exec format error"
    r"|exec container process (?:\(missing dynamic library\?\) )?`[^`]{1,200}`: "
    r"(?:No such file or directory|Permission denied|Exec format error|Operation not permitted)"
    r"|open executable: Permission denied")


def entrypoint_failed(message: str) -> bool:
    """The runtime says the container's process could not be exec'd (see _ENTRYPOINT_FAILED's sources)."""
    return _ENTRYPOINT_FAILED.search(message) is not None


# ---- the pod sandbox (FailedCreatePodSandBox, NetworkNotReady) -----------------------------------------------

_IP_EXHAUSTED = LazyPattern(
    r"failed to allocate for range|no IP addresses available in range|failed to assign an IP address"
    r"|no available IP|No available addresses|IP address pool exhausted|ipam.{0,80}exhausted"
    r"|InsufficientCidrBlocks|range is full", re.I)
# The pod network is not set up on the node: no CNI config, no CNI plugin binaries, or the agent is not ready.
_CNI_NOT_READY = LazyPattern(r"cni config uninitiali[sz]ed|NetworkPluginNotReady|cni plugin not initiali[sz]ed"
                             r"|network plugin is not ready|NetworkReady=false"
                             r"|failed to find plugin \\?\"[\w.-]+\\?\" in path", re.I)
_CNI = LazyPattern(r"failed to setup network for sandbox|failed to set up sandbox container .{0,80}network"
                   r"|plugin type=\"\w+\"|\bCNI\b|networkPlugin cni failed", re.I)


# Failures that come before the runtime calls the CNI plugin for the sandbox, so the pod network was never asked
# for an address:
# - the runtime handler the pod's RuntimeClass names is not in the runtime's configuration: containerd's
#   getSandboxRuntime, `no runtime for %q is configured` (pkg/cri/server/helpers.go and sandbox_run.go 1.5-1.6, where
#   it runs before setupPodNetwork; pkg/cri/sbserver 1.7 and internal/cri/server 2.x, where getSandboxController
#   calls it at the top of RunPodSandbox);
# - the kubelet could not reach the runtime's CRI socket at all (grpc's `dial unix <socket>: connect: ...`), so
#   RunPodSandbox never ran.
_RUNTIME_HANDLER_MISSING = LazyPattern(r'no runtime for \\?"[^"\\]{1,100}\\?" is configured')
_RUNTIME_UNREACHABLE = LazyPattern(
    r"dial unix \S{1,200}\.sock: connect: (?:connection refused|no such file or directory)")

_MAX_MESSAGE = 4096  # as the line signals: longer text is never handed to a pattern


def sandbox_errors(message: str) -> list[str]:
    """What a pod-sandbox failure shows: the pod network could not get an address, is not set up, or else.

    The CNI plugins' own wordings are in collectors/catalogs/network.yaml, read here by the same entries."""
    catalogued = sandbox_kinds(message) if len(message) <= _MAX_MESSAGE else []
    if "ip-exhausted" in catalogued or _IP_EXHAUSTED.search(message):
        return ["ip-exhausted"]
    if "cni-not-ready" in catalogued or _CNI_NOT_READY.search(message):
        return ["cni-not-ready"]
    if "cni-error" in catalogued:
        return ["cni-error"]
    if _CNI.search(message):
        return ["cni-error"]
    if _RUNTIME_HANDLER_MISSING.search(message):
        return ["runtime-handler-missing"]
    if _RUNTIME_UNREACHABLE.search(message):
        return ["runtime-unreachable"]
    if "sandbox" in message.lower():
        return ["runtime-error"]
    return []


# ---- image pulls that succeed slowly (Pulled) ------------------------------------------------------------------

_PULLED_IN = LazyPattern(r"Successfully pulled image .*? in ((?:\d+(?:\.\d+)?(?:h|ms|m|s|µs|us|ns))+)")
_DURATION_PART = LazyPattern(r"(\d+(?:\.\d+)?)(h|ms|m|s|µs|us|ns)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}


def pull_seconds(message: str) -> float | None:
    """Seconds from kubelet's `Successfully pulled image "x" in 4m32.1s (...)`, a Go duration; else None."""
    m = _PULLED_IN.search(message)
    if m is None:
        return None
    total = sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(m.group(1)))
    return round(total, 3)


# ---- node readiness -------------------------------------------------------------------------------------------

_NOT_READY_RULES: tuple[tuple[str, re.Pattern[str] | LazyPattern], ...] = (
    ("kubelet-stopped-posting", re.compile(r"Kubelet stopped posting node status|NodeStatusUnknown")),
    ("pleg-unhealthy", re.compile(r"PLEG is not healthy")),
    ("runtime-down", re.compile(r"container runtime is down|RuntimeReady=false|ContainerRuntimeNotReady"
                                r"|Skipping pod synchronization, container runtime is not up"
                                r"|containerd\.sock: connect: connection refused"
                                r"|dockershim\.sock: connect: connection refused")),
    ("network-not-ready", _CNI_NOT_READY),
)


# What a kubelet says in its first second, before its first runtime status check and its first PLEG relist have
# run: the zero-time branches of pkg/kubelet/runtime.go (runtimeErrors) and pkg/kubelet/pleg/generic.go (Healthy),
# kubernetes/kubernetes 1.8-1.31. They name no fault; every kubelet start reports them until the first sync.
_STARTING = LazyPattern(r"(?:PLEG is not healthy: )?pleg has yet to be successful"
                        r"|container runtime status check may not have completed yet")


def kubelet_starting_only(text: str) -> bool:
    """Whether the only reasons given for NotReady are those of a kubelet that has just started."""
    return _STARTING.search(text) is not None and not node_not_ready_reasons(text)


def node_not_ready_reasons(text: str) -> list[str]:
    """Why the kubelet reports (or the control plane marks) a node NotReady, from a condition or log text.

    `KubeletNotReady` is the Ready condition's catch-all reason: it counts only when nothing specific is named,
    and not when the only reasons named are a starting kubelet's (see _STARTING).
    """
    starting = _STARTING.search(text) is not None
    if starting:
        text = _STARTING.sub("", text)
    found = [name for name, rx in _NOT_READY_RULES if rx.search(text)]
    if not found and "KubeletNotReady" in text and not starting:
        found = ["kubelet-not-ready"]
    return found


# ---- image pulls and evictions ---------------------------------------------------------------------

_PULL_MESSAGE = LazyPattern(
    r"pull(?:ing)? image|pull policy of Never|default image tag|ErrImagePull|ImagePullBackOff|ErrImageNeverPull"
    r"|InvalidImageName|PullImage|image pull",
    re.I)
_PULL_KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("rate-limited", re.compile(r"toomanyrequests|too many requests|rate limit", re.I)),
    ("no-space", re.compile(r"no space left on device", re.I)),
    # The registry could not be reached at all: its name does not resolve, or nothing answers (Go's net errors).
    ("unreachable", re.compile(r"no such host|connection refused|network is unreachable|no route to host", re.I)),
    # The registry's own codes (the OCI distribution spec's MANIFEST_UNKNOWN, NAME_UNKNOWN, BLOB_UNKNOWN), in words.
    ("not-found", re.compile(r"not found|manifest unknown|NotFound|name unknown|blob unknown"
                             r"|(?:MANIFEST|NAME|BLOB)_UNKNOWN|is not present with pull policy of Never", re.I)),
    # "pull access denied, repository does not exist or may require authorization": the registry will not say
    # which (image.library_repository tells the case where it can only mean "does not exist"). moby always goes on
    # ", repository does not exist or may require 'docker login'" after "pull access denied for <repository>", so
    # the message says it even when a paste cuts it short.
    ("denied-or-missing", re.compile(r"repository does not exist or may require (?:authorization|'docker login')"
                                     r"|pull access denied for [^\s,]+")),
    # A malformed reference never reaches a registry: the image-not-found hypothesis covers it.
    ("not-found", re.compile(r"invalid reference format|couldn't parse image (?:name|reference)")),
    # The tag exists, but not for this node's platform (docker's and containerd's wording): no image to run here.
    ("not-found", re.compile(r"no matching manifest for \S+ in the manifest list|no match for platform in manifest")),
    # containerd's token fetch names the status code alone before 1.7 ("failed to fetch oauth token: unexpected
    # status: 403"; remotes/docker/auth/fetch.go): the registry refused the credentials.
    # GHCR words its UNAUTHORIZED ("unauthenticated: User cannot be authenticated with the token provided.") the
    # same after a "denied:" prefix on a blob or config fetch: the token was refused, whatever the code says.
    ("unauthorized", re.compile(r"unauthori[sz]ed|authentication required|not authorized|403 Forbidden"
                                r"|no basic auth credentials|\bunauthenticated: |cannot be authenticated with the token"
                                r"|failed to fetch (?:anonymous|oauth) token: unexpected status: 40[13]\b", re.I)),
    # The OCI distribution spec's DENIED ("requested access to the resource is denied"), and GHCR's bare "denied"
    # to a HEAD or GET of a manifest: registries answer it alike for a private repository and for one that does not
    # exist, so it says neither. UNAUTHORIZED (credentials missing or refused) is read above.
    ("denied-or-missing", re.compile(r"\bdenied\b|\bDENIED\b", re.I)),
    ("timeout", re.compile(r"i/o timeout|deadline exceeded|handshake timeout|timed out|Client\.Timeout", re.I)),
    ("tls", re.compile(r"x509|certificate", re.I)),
]
# The closing quote may be gone: a pasted line loses it when the quote ends the line.
_IMAGE_NAME = LazyPattern(r"""[Ii]mage\s*(?:=\s*)?\\*["']([^"'\\\s]+)\\*(?:["']|$)""")


# A bare repository name is Docker Hub's docker.io/library/<name> (distribution/reference's normalisation), where
# every repository is public: a registry that answers "denied or missing" there can only mean it does not exist.
_LIBRARY_DENIED = LazyPattern(r"docker\.io/library/[^\s\"'/]+\"?: pull access denied"
                              r"|pull access denied for [^\s,/]+(?:,|$)")


def library_repository(text: str) -> bool:
    """True when a pull refused as denied-or-missing names a repository under docker.io/library/."""
    return _LIBRARY_DENIED.search(text) is not None


def is_pull_message(text: str) -> bool:
    return _PULL_MESSAGE.search(text) is not None


def pull_error_kind(text: str) -> str:
    """not-found, unauthorized, denied-or-missing, timeout, unreachable, rate-limited, no-space, tls or other."""
    for kind, rx in _PULL_KINDS:
        if rx.search(text):
            return kind
    return "other"


def image_name(text: str) -> str:
    m = _IMAGE_NAME.search(text)
    return m.group(1) if m else ""


_LOW_ON = LazyPattern(r"low on resource: ([\w.\-]+)")
# The admission refusal names the node's conditions, a Go slice: "had condition: [DiskPressure]"
# (nodeConditionMessageFmt) and, while Admit formatted the eviction message with them, "The node was low on
# resource: [DiskPressure]."
# (pkg/kubelet/eviction/eviction_manager.go Admit: fmt.Sprintf(message, m.nodeConditions), helpers.go message
# "The node was low on resource: %v.", 1.5-1.8).
_HAD_CONDITION = LazyPattern(r"(?:had condition|low on resource): \[(\w+)\]")
_CONDITION_RESOURCE = {"MemoryPressure": "memory", "DiskPressure": "ephemeral-storage", "PIDPressure": "pids"}


def eviction_resource(message: str) -> str:
    """The resource a kubelet eviction message names, or ""."""
    if m := _LOW_ON.search(message):
        return m.group(1).rstrip(".")
    if m := _HAD_CONDITION.search(message):
        return _CONDITION_RESOURCE.get(m.group(1), "")
    if "ephemeral" in message and ("storage" in message or "EmptyDir" in message):
        return "ephemeral-storage"
    if "EmptyDir volume" in message:
        return "ephemeral-storage"
    return ""


# The kubelet's local-storage limit evictions (pkg/kubelet/eviction/eviction_manager.go podEphemeralStorageMessageFmt,
# containerEphemeralStorageMessageFmt, emptyDirMessageFmt, 1.9-1.31): a pod over its own limit, whatever the node has
# free, unlike "The node was low on resource" (node pressure).
_OVER_LIMIT = LazyPattern(r"ephemeral local storage usage exceeds the total limit of containers"
                          r"|exceeded its local ephemeral storage limit|Usage of EmptyDir volume \S+ exceeds the limit")


def eviction_over_limit(message: str) -> bool:
    """True when an eviction message says the pod went over its own storage limit, not that the node ran low."""
    return _OVER_LIMIT.search(message) is not None


# The kubelet names the container it ranked first and what it used against its request (pkg/kubelet/eviction/
# helpers.go evictionMessage): "Container <c> was using <u>, which exceeds its request of <r>." (1.9-1.21), then
# "Container <c> was using <u>, request is <r>, has larger consumption of <resource>." (1.22 on). A Guaranteed pod
# never uses more than it requests, so the line says the pod was ranked for its usage above the request.
_OVER_REQUEST = LazyPattern(
    r"Container \S+ was using ~?[\d.]+[A-Za-z]*, (?:which exceeds its request of|request is) ~?[\d.]")


def eviction_over_request(message: str) -> bool:
    """True when a kubelet eviction message says a container was using more than its request."""
    return _OVER_REQUEST.search(message) is not None


def eviction_condition(message: str) -> str:
    """The node condition an eviction or admission message names (`had condition: [DiskPressure]`), or ""."""
    m = _HAD_CONDITION.search(message)
    return m.group(1) if m and m.group(1) in _CONDITION_RESOURCE else ""


_RESOURCE_CONDITION = {"memory": "MemoryPressure", "pids": "PIDPressure"}


def plain_resource(resource: str) -> str:
    """The resource an eviction-manager log names, as pod messages name it. kubelet 1.7 logged filesystems
    (nodefs, imagefs); later ones log the resource of the signal (eviction/helpers.go signalToResource:
    ephemeral-storage, inodes, memory, pids). Inodes run out on the same filesystems: disk, as the condition says."""
    if any(s in resource for s in ("nodefs", "imagefs", "containerfs", "inodes")):
        return "ephemeral-storage"
    plain = resource.removesuffix(".available")
    return "pids" if plain in ("pid", "pids") else plain


def pressure_condition(resource: str) -> str:
    """MemoryPressure for memory, DiskPressure for any filesystem signal, PIDPressure for pids."""
    if resource in _RESOURCE_CONDITION:
        return _RESOURCE_CONDITION[resource]
    if any(s in resource for s in ("storage", "nodefs", "imagefs", "containerfs", "inodes")):
        return "DiskPressure"
    return ""
