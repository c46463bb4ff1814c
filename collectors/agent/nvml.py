"""An NVML snapshot of every GPU on the node, and a background watch for Xid events.

The snapshot is the JSON the NVML parser reads (schema "triagebot.nvml/v1"): per device its index,
UUID, PCI bus id, name, temperature, power, clock throttle reasons bitmask, utilisation, memory, ECC
counters (volatile and aggregate), retired pages and remapped rows, the PCIe link (generation and width,
current and maximum, and the replay counter) and each NVLink's state and error counters. Every NVML call
is guarded on its own: a field that fails is left out and its error recorded under the device's `errors`, so one
unsupported query (retired pages on an H100) or one lost GPU does not blank the rest. A device whose
calls fail with GPU_IS_LOST is marked `"lost": true`: that is the fallen-off-the-bus state.

Without the NVML library (no driver, no GPU) the answer is `{"available": false, "error": "NVML Shared
Library Not Found"}`: the error text is NVML's own.

NVML functions are looked up on a module object passed in (pynvml in production), so tests can run the
same code against a recorded fake.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

SCHEMA = "triagebot.nvml/v1"


def load_nvml() -> Any | None:
    """The pynvml module from nvidia-ml-py, or None when it is not installed."""
    try:
        import pynvml
    except ImportError:
        return None
    return pynvml


def error_text(nvml: Any, err: BaseException) -> str:
    """NVML's own message ("GPU is lost", "Not Supported", "NVML Shared Library Not Found")."""
    text = str(err)
    return text if text else type(err).__name__


def is_lost(nvml: Any, err: BaseException) -> bool:
    return getattr(err, "value", None) == getattr(nvml, "NVML_ERROR_GPU_IS_LOST", object())


def _text(value: Any) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


class _Device:
    """Reads one device's fields; each call guarded, errors kept per field."""

    def __init__(self, nvml: Any, index: int) -> None:
        self.nvml = nvml
        self.out: dict[str, Any] = {"index": index}
        self.errors: dict[str, str] = {}
        self.lost = False

    def call(self, field: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except self.nvml.NVMLError as err:
            self.errors[field] = error_text(self.nvml, err)
            self.lost = self.lost or is_lost(self.nvml, err)
            return None

    def put(self, field: str, fn: Callable[..., Any], *args: Any, convert: Callable[[Any], Any] = lambda v: v) -> None:
        value = self.call(field, fn, *args)
        if value is not None:
            self.out[field] = convert(value)

    def read(self) -> dict[str, Any]:
        nvml = self.nvml
        handle = self.call("handle", nvml.nvmlDeviceGetHandleByIndex, self.out["index"])
        if handle is not None:
            self._identity(handle)
            self._health(handle)
            self._load(handle)
            self._memory_errors(handle)
            self._pcie(handle)
            self._nvlinks(handle)
        self.out["lost"] = self.lost
        self.out["errors"] = self.errors
        return self.out

    def _identity(self, handle: Any) -> None:
        nvml = self.nvml
        self.put("uuid", nvml.nvmlDeviceGetUUID, handle, convert=_text)
        self.put("pci_bus_id", nvml.nvmlDeviceGetPciInfo, handle, convert=lambda info: _text(info.busId))
        self.put("name", nvml.nvmlDeviceGetName, handle, convert=_text)

    def _health(self, handle: Any) -> None:
        nvml = self.nvml
        self.put("temperature_c", nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU, convert=int)
        self.put("power_w", nvml.nvmlDeviceGetPowerUsage, handle, convert=lambda mw: round(mw / 1000, 1))
        self.put("power_limit_w", nvml.nvmlDeviceGetEnforcedPowerLimit, handle,
                 convert=lambda mw: round(mw / 1000, 1))
        # Renamed "clocks event reasons" in newer drivers; the bits are the same.
        reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) \
            or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
        self.put("clocks_throttle_reasons", reasons, handle, convert=int)

    def _load(self, handle: Any) -> None:
        nvml = self.nvml
        self.put("utilization", nvml.nvmlDeviceGetUtilizationRates, handle,
                 convert=lambda u: {"gpu_percent": int(u.gpu), "memory_percent": int(u.memory)})
        self.put("memory", nvml.nvmlDeviceGetMemoryInfo, handle,
                 convert=lambda m: {"used_bytes": int(m.used), "total_bytes": int(m.total)})

    def _memory_errors(self, handle: Any) -> None:
        nvml = self.nvml
        ecc: dict[str, dict[str, int]] = {}
        for counter, key in ((nvml.NVML_VOLATILE_ECC, "volatile"), (nvml.NVML_AGGREGATE_ECC, "aggregate")):
            pair = {}
            for kind, name in ((nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, "corrected"),
                               (nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, "uncorrected")):
                value = self.call(f"ecc.{key}.{name}", nvml.nvmlDeviceGetTotalEccErrors, handle, kind, counter)
                if value is not None:
                    pair[name] = int(value)
            if pair:
                ecc[key] = pair
        if ecc:
            self.out["ecc"] = ecc
        self._retired_pages(handle)
        self.put("remapped_rows", nvml.nvmlDeviceGetRemappedRows, handle, convert=lambda r: {
            "correctable": int(r[0]), "uncorrectable": int(r[1]), "pending": bool(r[2]), "failure": bool(r[3])})

    def _pcie(self, handle: Any) -> None:
        """The negotiated link against what device and slot allow (seed 001:671-673, 001:808). An idle GPU
        lowers its link generation to save power, so only the width, or the generation under load, says
        the link trained down; the parser decides that, this only records."""
        nvml = self.nvml
        pcie: dict[str, int] = {}
        for key, fn in (("gen", nvml.nvmlDeviceGetCurrPcieLinkGeneration),
                        ("gen_max", nvml.nvmlDeviceGetMaxPcieLinkGeneration),
                        ("width", nvml.nvmlDeviceGetCurrPcieLinkWidth),
                        ("width_max", nvml.nvmlDeviceGetMaxPcieLinkWidth),
                        ("replay_count", nvml.nvmlDeviceGetPcieReplayCounter)):
            value = self.call(f"pcie.{key}", fn, handle)
            if value is not None:
                pcie[key] = int(value)
        if pcie:
            self.out["pcie"] = pcie

    def _nvlinks(self, handle: Any) -> None:
        """Each NVLink's state and its data-link error counters (CRC flit/data, replay, recovery), which count
        up from driver load. A GPU without NVLink answers Not Supported on link 0; the first link number
        past the GPU's last answers an error too, which ends the walk without recording it."""
        nvml = self.nvml
        counters = (("crc_flit", nvml.NVML_NVLINK_ERROR_DL_CRC_FLIT), ("crc_data", nvml.NVML_NVLINK_ERROR_DL_CRC_DATA),
                    ("replay", nvml.NVML_NVLINK_ERROR_DL_REPLAY), ("recovery", nvml.NVML_NVLINK_ERROR_DL_RECOVERY))
        links: list[dict[str, Any]] = []
        for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18))):
            try:
                state = nvml.nvmlDeviceGetNvLinkState(handle, link)
            except nvml.NVMLError as err:
                if link == 0:
                    self.errors["nvlink"] = error_text(nvml, err)
                    self.lost = self.lost or is_lost(nvml, err)
                break
            entry: dict[str, Any] = {"link": link, "active": bool(state)}
            if state:
                for name, counter in counters:
                    value = self.call(f"nvlink.{link}.{name}", nvml.nvmlDeviceGetNvLinkErrorCounter, handle, link,
                                      counter)
                    if value is not None:
                        entry[name] = int(value)
            links.append(entry)
        if links:
            self.out["nvlinks"] = links

    def _retired_pages(self, handle: Any) -> None:
        """Page retirement (pre-Ampere); Ampere and later remap rows instead and answer Not Supported."""
        nvml = self.nvml
        pages: dict[str, Any] = {}
        for cause, name in ((nvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, "sbe"),
                            (nvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, "dbe")):
            value = self.call(f"retired_pages.{name}", nvml.nvmlDeviceGetRetiredPages, handle, cause)
            if value is not None:
                pages[name] = len(value)
        pending = self.call("retired_pages.pending", nvml.nvmlDeviceGetRetiredPagesPendingStatus, handle)
        if pending is not None:
            pages["pending"] = bool(pending)
        if pages:
            self.out["retired_pages"] = pages


def _system(nvml: Any, errors: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, name in (("driver_version", "nvmlSystemGetDriverVersion"), ("nvml_version", "nvmlSystemGetNVMLVersion")):
        try:
            out[key] = _text(getattr(nvml, name)())
        except nvml.NVMLError as err:
            errors[key] = error_text(nvml, err)
    return out


def now_iso(timespec: str = "seconds") -> str:
    return datetime.now(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def snapshot(nvml: Any | None, node: str = "") -> dict[str, Any]:
    """Every device NVML can see, or why NVML cannot be used."""
    doc: dict[str, Any] = {"schema": SCHEMA, "node": node, "captured_at": now_iso()}
    if nvml is None:
        return doc | {"available": False, "error": "nvidia-ml-py (pynvml) is not installed"}
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as err:
        return doc | {"available": False, "error": error_text(nvml, err)}
    try:
        errors: dict[str, str] = {}
        doc |= {"available": True, **_system(nvml, errors)}
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except nvml.NVMLError as err:
            errors["device_count"] = error_text(nvml, err)
            count = 0
        doc["device_count"] = count
        doc["devices"] = [_Device(nvml, index).read() for index in range(count)]
        doc["errors"] = errors
    finally:
        _shutdown(nvml)
    return doc


def _shutdown(nvml: Any) -> None:
    with contextlib.suppress(nvml.NVMLError):  # nothing to release if NVML was already shut down
        nvml.nvmlShutdown()


class XidWatcher:
    """Buffers NVML Xid critical-error events in the background, for snapshots to report.

    NVML delivers only events that happen after registration, so a watch must already be running when a
    GPU fails; the kernel log stays the source for Xids from before the agent started.
    """

    def __init__(self, nvml: Any, capacity: int = 1024, wait_ms: int = 1000) -> None:
        self.nvml = nvml
        self.wait_ms = wait_ms
        self._events: deque[dict[str, Any]] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._event_set: Any = None
        self.error = ""

    def start(self) -> bool:
        """Begin watching; False (with `error` set) when NVML or its events are unavailable."""
        nvml = self.nvml
        try:
            nvml.nvmlInit()
        except nvml.NVMLError as err:
            self.error = error_text(nvml, err)
            return False
        try:
            self._event_set = nvml.nvmlEventSetCreate()
            registered = self._register()
        except nvml.NVMLError as err:
            self.error = error_text(nvml, err)
            _shutdown(nvml)
            return False
        if not registered:
            self.error = "no device supports Xid events"
            self._release()
            return False
        self._thread = threading.Thread(target=self._run, name="xid-watch", daemon=True)
        self._thread.start()
        return True

    def _register(self) -> int:
        nvml = self.nvml
        registered = 0
        for index in range(int(nvml.nvmlDeviceGetCount())):
            try:
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
                nvml.nvmlDeviceRegisterEvents(handle, nvml.nvmlEventTypeXidCriticalError, self._event_set)
                registered += 1
            except nvml.NVMLError:
                continue  # unsupported or lost device: the others are still watched
        return registered

    def _run(self) -> None:
        nvml = self.nvml
        while not self._stop.is_set():
            try:
                data = nvml.nvmlEventSetWait(self._event_set, self.wait_ms)
            except nvml.NVMLError as err:
                if getattr(err, "value", None) != getattr(nvml, "NVML_ERROR_TIMEOUT", None):
                    self.error = error_text(nvml, err)
                    self._stop.wait(1.0)  # a failing wait must not spin
                continue
            self._record(data)
        self._release()

    def _record(self, data: Any) -> None:
        nvml = self.nvml
        if int(data.eventType) != int(nvml.nvmlEventTypeXidCriticalError):
            return
        event: dict[str, Any] = {"time": now_iso("milliseconds"), "source": "nvml-event", "xid": int(data.eventData)}
        for key, fn, conv in (("uuid", nvml.nvmlDeviceGetUUID, _text),
                              ("pci_bus_id", nvml.nvmlDeviceGetPciInfo, lambda i: _text(i.busId))):
            try:
                event[key] = conv(fn(data.device))
            except nvml.NVMLError:
                continue
        with self._lock:
            self._events.append(event)

    def _release(self) -> None:
        nvml = self.nvml
        try:
            if self._event_set is not None:
                nvml.nvmlEventSetFree(self._event_set)
        except nvml.NVMLError:
            pass
        self._event_set = None
        _shutdown(nvml)

    def events(self, since: datetime) -> list[dict[str, Any]]:
        start = since.astimezone(UTC)
        with self._lock:
            return [e for e in self._events if datetime.fromisoformat(e["time"]) >= start]

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.wait_ms / 1000 + 2)
