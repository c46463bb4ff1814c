"""A stand-in for the pynvml module with recorded GPU state, for machines without a GPU.

Only the NVML functions are faked. Constants and error classes come from the real nvidia-ml-py binding,
whose errors carry NVML's own messages ("GPU is lost", "Not Supported") without loading the library, so
the agent's error handling meets the real exception types.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml

NOT_SUPPORTED = pynvml.NVML_ERROR_NOT_SUPPORTED
GPU_IS_LOST = pynvml.NVML_ERROR_GPU_IS_LOST
H100 = "NVIDIA H100 80GB HBM3"
H100_MEMORY = 85520809984  # 81559 MiB, as NVML reports an H100 SXM5 80GB


@dataclass
class FakeGpu:
    uuid: str
    bus_id: str
    name: str = H100
    temperature: int = 33
    power_mw: int = 71234
    limit_mw: int = 700000
    reasons: int = 0x1  # GpuIdle
    util: tuple[int, int] = (0, 0)
    memory: tuple[int, int] = (581828608, H100_MEMORY)
    ecc: dict[tuple[int, int], int] = field(default_factory=dict)  # (error type, counter type) -> count
    retired: dict[int, list[int]] | None = None  # None: page retirement not supported (Ampere and later)
    retired_pending: bool | None = None
    remapped: tuple[int, int, int, int] | None = (0, 0, 0, 0)
    lost: bool = False
    xid_events_supported: bool = True
    pcie: tuple[int, int, int, int] = (5, 5, 16, 16)  # gen, max gen, width, max width
    pcie_replays: int = 0
    nvlinks: list[bool] | None = field(default_factory=lambda: [True] * 18)  # None: no NVLink (a PCIe card)
    nvlink_errors: dict[tuple[int, int], int] = field(default_factory=dict)  # (link, counter) -> count


class FakeNvml:
    """pynvml with `gpus` installed; `init_error` makes nvmlInit fail with that NVML error code."""

    def __init__(self, gpus: list[FakeGpu], init_error: int | None = None, driver: str = "550.90.07") -> None:
        self.gpus = gpus
        self.init_error = init_error
        self.driver = driver
        self.initialised = 0
        self.events: deque[SimpleNamespace] = deque()
        self.event_set_freed = False
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(pynvml, name)

    # ---- library --------------------------------------------------------------------------------------

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise pynvml.NVMLError(self.init_error)
        with self._lock:
            self.initialised += 1

    def nvmlShutdown(self) -> None:
        with self._lock:
            if self.initialised == 0:
                raise pynvml.NVMLError(pynvml.NVML_ERROR_UNINITIALIZED)
            self.initialised -= 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.driver

    def nvmlSystemGetNVMLVersion(self) -> str:
        return "12." + self.driver

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if not 0 <= index < len(self.gpus):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return index

    def _gpu(self, handle: int) -> FakeGpu:
        gpu = self.gpus[handle]
        if gpu.lost:
            raise pynvml.NVMLError(GPU_IS_LOST)
        return gpu

    # ---- identity and health --------------------------------------------------------------------------

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        return self.gpus[handle].uuid  # cached by the driver: readable even from a lost GPU

    def nvmlDeviceGetPciInfo(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(busId=self.gpus[handle].bus_id)

    def nvmlDeviceGetName(self, handle: int) -> str:
        return self._gpu(handle).name

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        return self._gpu(handle).temperature

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        return self._gpu(handle).power_mw

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> int:
        return self._gpu(handle).limit_mw

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: int) -> int:
        return self._gpu(handle).reasons

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> SimpleNamespace:
        gpu, memory = self._gpu(handle).util
        return SimpleNamespace(gpu=gpu, memory=memory)

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        used, total = self._gpu(handle).memory
        return SimpleNamespace(used=used, total=total, free=total - used)

    def nvmlDeviceGetTotalEccErrors(self, handle: int, error_type: int, counter_type: int) -> int:
        return self._gpu(handle).ecc.get((error_type, counter_type), 0)

    def nvmlDeviceGetRetiredPages(self, handle: int, cause: int) -> list[int]:
        gpu = self._gpu(handle)
        if gpu.retired is None:
            raise pynvml.NVMLError(NOT_SUPPORTED)
        return gpu.retired.get(cause, [])

    def nvmlDeviceGetRetiredPagesPendingStatus(self, handle: int) -> int:
        gpu = self._gpu(handle)
        if gpu.retired_pending is None:
            raise pynvml.NVMLError(NOT_SUPPORTED)
        return int(gpu.retired_pending)

    def nvmlDeviceGetRemappedRows(self, handle: int) -> tuple[int, int, int, int]:
        gpu = self._gpu(handle)
        if gpu.remapped is None:
            raise pynvml.NVMLError(NOT_SUPPORTED)
        return gpu.remapped

    # ---- links ----------------------------------------------------------------------------------------

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: int) -> int:
        return self._gpu(handle).pcie[0]

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: int) -> int:
        return self._gpu(handle).pcie[1]

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: int) -> int:
        return self._gpu(handle).pcie[2]

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: int) -> int:
        return self._gpu(handle).pcie[3]

    def nvmlDeviceGetPcieReplayCounter(self, handle: int) -> int:
        return self._gpu(handle).pcie_replays

    def nvmlDeviceGetNvLinkState(self, handle: int, link: int) -> int:
        gpu = self._gpu(handle)
        if gpu.nvlinks is None:
            raise pynvml.NVMLError(NOT_SUPPORTED)
        if not 0 <= link < len(gpu.nvlinks):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return int(gpu.nvlinks[link])

    def nvmlDeviceGetNvLinkErrorCounter(self, handle: int, link: int, counter: int) -> int:
        return self._gpu(handle).nvlink_errors.get((link, counter), 0)

    # ---- events ---------------------------------------------------------------------------------------

    def nvmlEventSetCreate(self) -> str:
        return "event-set"

    def nvmlDeviceRegisterEvents(self, handle: int, types: int, event_set: str) -> None:
        if not self.gpus[handle].xid_events_supported:
            raise pynvml.NVMLError(NOT_SUPPORTED)

    def nvmlEventSetFree(self, event_set: str) -> None:
        self.event_set_freed = True

    def emit_xid(self, handle: int, code: int) -> None:
        self.events.append(SimpleNamespace(device=handle, eventType=pynvml.nvmlEventTypeXidCriticalError,
                                           eventData=code))

    def nvmlEventSetWait(self, event_set: str, timeout_ms: int) -> SimpleNamespace:
        try:
            return self.events.popleft()
        except IndexError:
            threading.Event().wait(min(timeout_ms, 20) / 1000)
            raise pynvml.NVMLError(pynvml.NVML_ERROR_TIMEOUT) from None


def h100_node(lost: int | None = None) -> list[FakeGpu]:
    """Eight H100 SXM5 at the PCI addresses of an HGX board; `lost` marks one fallen off the bus."""
    buses = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]
    uuids = [
        "GPU-9d3b1a52-6f0e-3c4e-8d2b-7e1f0a9c4b21", "GPU-4c1f8a2e-7b3d-5e9f-a1c2-d3e4f5a6b7c8",
        "GPU-2e7a9c41-0b5d-4f3e-9a8c-6d1e2f3a4b5c", "GPU-7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2910",
        "GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d", "GPU-5e4d3c2b-1a09-4f8e-b7d6-c5b4a3928170",
        "GPU-c0ffee00-1234-4abc-9def-0123456789ab", "GPU-0badf00d-5678-4cde-8f01-23456789abcd",
    ]
    gpus = [FakeGpu(uuid=u, bus_id=f"00000000:{b}:00.0", temperature=31 + i) for i, (u, b) in
            enumerate(zip(uuids, buses, strict=True))]
    if lost is not None:
        gpus[lost].lost = True
    return gpus
