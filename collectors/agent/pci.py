"""NVIDIA GPUs on the PCI bus, from sysfs: tells "no GPU here" from "GPUs present but NVML unusable"."""

from __future__ import annotations

from pathlib import Path

_NVIDIA = "0x10de"
_GPU_CLASSES = ("0x0300", "0x0302")  # VGA controller, 3D controller; NVSwitch bridges (0x0680) are not GPUs


def nvidia_gpus(sys_root: Path) -> list[str]:
    """PCI addresses (0000:18:00.0) of NVIDIA display/3D controllers."""
    out: list[str] = []
    try:
        devices = sorted((sys_root / "bus" / "pci" / "devices").iterdir())
    except OSError:
        return out
    for device in devices:
        try:
            vendor = (device / "vendor").read_text(encoding="ascii").strip().lower()
            klass = (device / "class").read_text(encoding="ascii").strip().lower()
        except OSError:
            continue
        if vendor == _NVIDIA and klass.startswith(_GPU_CLASSES):
            out.append(device.name)
    return out
