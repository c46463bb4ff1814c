"""Settings of the node agent: TRIAGEBOT_AGENT_* environment variables.

Every host path is a setting so tests can point the agent at a fixture tree, and so a DaemonSet can mount
the host's /proc, /sys and runtime state under other paths inside the container.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Where container runtimes keep each container's OCI bundle; `{id}` is a validated 64-hex container id.
# The bundle's config.json carries the CRI annotations that name the container.
DEFAULT_BUNDLE_DIRS = (
    "/run/containerd/io.containerd.runtime.v2.task/k8s.io/{id}",  # containerd (CRI plugin)
    "/run/containers/storage/overlay-containers/{id}/userdata",  # CRI-O
)

# Host directories that hold the tmpfs a container sees at /dev/shm, and where the agent sees each: the sandbox's
# shm (containerd, CRI-O) or a memory-backed emptyDir (kubelet). The DaemonSet mounts them read-only.
DEFAULT_SHM_ROOTS = {
    "/run/containerd/io.containerd.grpc.v1.cri/sandboxes": Path("/run/containerd/io.containerd.grpc.v1.cri/sandboxes"),
    "/run/containers/storage/overlay-containers": Path("/run/containers/storage/overlay-containers"),
    "/var/run/containers/storage/overlay-containers": Path("/run/containers/storage/overlay-containers"),
    "/var/lib/kubelet/pods": Path("/var/lib/kubelet/pods"),
}


class AgentSettings(BaseSettings):
    """What `triagebot agent` reads, where it listens, and how much it may answer."""

    model_config = SettingsConfigDict(env_prefix="TRIAGEBOT_AGENT_", extra="ignore")

    token: SecretStr = Field(description="bearer token every /v1 request must carry; at least 16 characters")
    host: str = Field("0.0.0.0", description="listen address; the DaemonSet listens on the node IP")
    port: int = Field(9105, ge=1, le=65535)
    node_name: str = Field("", description="this node's name (downward API spec.nodeName), shown in answers")

    proc_root: Path = Path("/proc")
    sys_root: Path = Path("/sys")
    cgroup_root: Path = Path("/sys/fs/cgroup")
    kmsg_path: Path = Path("/dev/kmsg")
    pod_resources_socket: Path = Path("/var/lib/kubelet/pod-resources/kubelet.sock")
    pod_resources_json: Path | None = Field(
        None, description="a JSON dump of the kubelet PodResources List answer; used instead of the socket")
    container_bundle_dirs: list[str] = Field(default_factory=lambda: list(DEFAULT_BUNDLE_DIRS))
    shm_roots: dict[str, Path] = Field(default_factory=lambda: dict(DEFAULT_SHM_ROOTS),
                                       description="host directory -> where the agent sees it, for /v1/shm")

    max_response_bytes: int = Field(2 * 1024 * 1024, ge=4096, le=64 * 1024 * 1024)
    journalctl_fallback: bool = Field(False, description="run journalctl -k when /dev/kmsg cannot be read")
    journalctl_path: Path = Path("/usr/bin/journalctl")
    journalctl_timeout: float = Field(10.0, gt=0, le=60)
    xid_watch: bool = Field(True, description="watch NVML Xid events in the background while NVML works")

    @field_validator("token")
    @classmethod
    def _long_enough(cls, value: SecretStr) -> SecretStr:
        # A short shared token is guessable; the error names the length, never the value.
        if len(value.get_secret_value()) < 16:
            raise ValueError("must be at least 16 characters")
        return value
