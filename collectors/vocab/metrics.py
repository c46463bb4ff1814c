"""Facts read from Prometheus scrapes and query results, NVML snapshots and container logs."""

from collectors.vocab.spec import FactSpec

FACTS: list[FactSpec] = [
    FactSpec("gpu.util_percent", "float", "highest GPU utilisation seen", "max", "100"),
    FactSpec("gpu.fb_used_ratio", "float", "framebuffer used / total, highest seen", "max", "0.97"),
    FactSpec("gpu.temp_c", "float", "highest GPU temperature", "max", "91"),
    FactSpec("gpu.throttle_reasons", "list[str]",
             "active clock throttle reasons: thermal (hw), sw-thermal, power (sw power cap), power-brake, "
             "hw-slowdown; benign idle/app-clock bits are left out", "union", "thermal"),
    FactSpec("gpu.ecc_dbe", "int", "uncorrectable (double-bit) ECC errors", "max"),
    FactSpec("gpu.ecc_sbe", "int", "corrected (single-bit) ECC errors", "max"),
    FactSpec("gpu.row_remap_failed", "bool", "row remapping failed or is pending", "any"),
    FactSpec("cuda.oom", "bool", "CUDA out of memory reported by the application", "any"),
    FactSpec("cuda.memory_held_elsewhere_ratio", "float",
             "share of the GPU's memory held outside the failing process when CUDA ran out: (total capacity - "
             "reserved by PyTorch - free) / total, from PyTorch's out-of-memory message", "max", "0.66"),
    FactSpec("cuda.ecc_uncorrectable", "bool",
             "the CUDA runtime told the application an uncorrectable ECC error was encountered", "any"),
    FactSpec("memory.working_set_ratio", "float", "container working set / memory limit, highest seen", "max",
             "0.99"),
    FactSpec("memory.growing", "bool", "working set grew steadily over the window (a leak shape)", "any"),
    FactSpec("node.memory_available_ratio", "float", "node MemAvailable / MemTotal, lowest seen", "min"),
    FactSpec("node.cpu_steal_ratio", "float", "share of CPU time stolen by the hypervisor", "max"),
    FactSpec("latency.p99_seconds", "float", "service p99 latency", "max", "0.8"),
    FactSpec("latency.queue_share", "float", "share of request time spent queued", "max", "0.7"),
    FactSpec("traffic.increase_ratio", "float", "request rate now / baseline", "max", "4.0"),
    FactSpec("dns.error_ratio", "float", "CoreDNS SERVFAIL+NXDOMAIN / all responses", "max"),
    FactSpec("dns.p99_seconds", "float", "CoreDNS p99 request duration", "max"),
    FactSpec("dns.errors", "bool", "the application failed to resolve names", "any"),
    FactSpec("net.mtu_mismatch", "bool", "interfaces on the path disagree on MTU", "any"),
    FactSpec("app.retries", "bool", "the application logs retries or retry storms", "any"),
    FactSpec("app.shm_exhausted", "bool",
             "shared memory (/dev/shm) ran out: DataLoader bus error, or no space left writing to /dev/shm",
             "any"),
    FactSpec("app.errors", "list[str]", "normalised application failures: traceback, config, "
             "connection-refused, connection-timeout, entrypoint (the command cannot run: not found, not executable, "
             "exec format error), file-not-found, permission-denied, model-load, missing-module", "union", "config"),
]
