"""Application (container) logs to facts: CUDA OOM, /dev/shm exhaustion, failures, DNS errors, retries.

A training pod's log also carries NCCL and PyTorch distributed output, so the NCCL reader runs over the
same lines; the application rules skip NCCL's own lines, whose plugin-loading chatter ("No such file
or directory") is not an application failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.models import Artifact, ArtifactKind, Fact, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.gpu import cuda_oom, nccl
from collectors.parsers.logs import access_log, dist_init, horovod_stall, train_log
from collectors.parsers.sink import FactSink
from collectors.parsers.text.needles import find_needles
from collectors.sniffers.container_log import claims_line, sniff
from collectors.text import normalise


@dataclass(frozen=True)
class Rule:
    """A fact value that holds when any needle is in the line (and `pattern`, if given, matches)."""

    fact: str
    value: object
    needles: tuple[str, ...]
    pattern: re.Pattern[str] | None = None


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# Normalised app.errors values; the vocabulary (collectors/vocab/metrics.py) lists the same set.
RULES: tuple[Rule, ...] = (
    Rule("cuda.oom", True, ("CUDA out of memory", "CUDA error: out of memory", "torch.OutOfMemoryError",
                            "cuda.OutOfMemoryError", "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation",
                            "CUBLAS_STATUS_ALLOC_FAILED")),
    # TensorFlow's op-output allocation failure is the GPU's memory unless it names the CPU device or allocator
    # (collectors/catalogs/frameworks.yaml tf-oom-allocating-tensor: host memory is not CUDA's).
    Rule("cuda.oom", True, ("OOM when allocating tensor",),
         _rx(r"OOM when allocating tensor(?!.*(?:device:CPU|by allocator (?:cpu|mklcpu)\b))")),
    # The process found no usable GPU and runs without one. CUDA runtime/driver error strings (CUDA Runtime API
    # reference, cudaError_t / CUresult, CUDA 10-12): 35 cudaErrorInsufficientDriver, 100 cudaErrorNoDevice,
    # 803 cudaErrorSystemDriverMismatch, 804 cudaErrorCompatNotSupportedOnDevice; PyTorch torch/cuda/__init__.py
    # (_check_driver "Found no NVIDIA driver on your system", _lazy_init "Torch not compiled with CUDA enabled",
    # 1.x-2.x). Fix round f6: nvidia-smi's own two messages for a process that reaches no driver (the nvidia-smi
    # binary of the NVIDIA driver, closed source, drivers 340-580 as users paste them: "NVIDIA-SMI has failed because
    # it couldn't communicate with the NVIDIA driver", "NVIDIA-SMI couldn't find libnvidia-ml.so library in your
    # system"): a job or container where they print has no GPU it can use.
    Rule("cuda.unavailable", True, ("CUDA-capable device", "display driver / cuda driver", "insufficient for CUDA",
                                    "CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
                                    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted",
                                    "Found no NVIDIA driver", "not compiled with CUDA enabled", "NVIDIA-SMI "),
         _rx(r"no CUDA-capable device is detected|system has unsupported display driver / cuda driver combination|"
             r"CUDA driver version is insufficient for CUDA runtime version|CUDA_ERROR_(?:NO_DEVICE|"
             r"SYSTEM_DRIVER_MISMATCH|COMPAT_NOT_SUPPORTED_ON_DEVICE)|forward compatibility was attempted on non "
             r"supported HW|Found no NVIDIA driver on your system|Torch not compiled with CUDA enabled|"
             r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver|"
             r"NVIDIA-SMI couldn't find libnvidia-ml\.so library")),
    Rule("app.shm_exhausted", True, ("Bus error", "insufficient shared memory", "unable to allocate shared memory"),
         _rx(r"\bBus error\b|insufficient shared memory|unable to allocate shared memory")),
    # "No space left on device" only means shm when PyTorch names its shm file or /dev/shm.
    Rule("app.shm_exhausted", True, ("No space left on device",), _rx(r"/dev/shm|</torch_|\btorch_\d+_")),
    Rule("dns.errors", True, ("Temporary failure in name resolution", "Name or service not known", "NXDOMAIN",
                              "no such host", "server misbehaving", "getaddrinfo ENOTFOUND",
                              "getaddrinfo EAI_AGAIN", "UnknownHostException", "Could not resolve host",
                              "NameResolutionError", "Failed to resolve", "nodename nor servname")),
    # CoreDNS's loop plugin probes upstream with a random HINFO query at start; its timeout is not a failed lookup.
    Rule("dns.errors", True, ("i/o timeout",), _rx(r"^(?!.*\bHINFO:).*:53\b")),
    # kube-proxy's own log (kubectl logs -n kube-system kube-proxy-...): the Service rules were not programmed.
    Rule("proxy.sync_failed", True, ("iptables-restore", "Sync failed", "Failed to sync"),
         _rx(r"Failed to execute iptables-restore|iptables-restore failed|\"Sync failed\"|"
             r"Failed to sync (?:iptables|ipvs) rules")),
    Rule("app.retries", True, ("etry", "ttempt"),
         _rx(r"Retry\(total=|\b[Rr]etrying\b|\b[Rr]etry (?:attempt |#)?\d+|\b[Aa]ttempt \d+\s*(?:/|of)\s*\d+")),
    Rule("app.errors", "traceback", ("Traceback (most recent call last)",)),
    Rule("app.errors", "missing-module", ("ModuleNotFoundError", "ImportError: ")),
    Rule("app.errors", "config", ("yaml.scanner", "yaml.parser", "yaml.constructor", "ScannerError",
                                  "omegaconf.errors", "hydra.errors", "ConfigError", "ConfigurationError",
                                  "nvalid configuration")),
    Rule("app.errors", "config", ("validation error",), _rx(r"validation errors? for \w*(?:Settings|Config)")),
    Rule("app.errors", "config", ("nvironment variable",),
         _rx(r"(?i)environment variable .*(?:not set|is required|missing|must be set|undefined)|"
             r"(?:missing|required) .*environment variable")),
    Rule("app.errors", "config", ("KeyError",), _rx(r"KeyError: ['\"][A-Z][A-Z0-9_]{2,}['\"]")),
    Rule("app.errors", "connection-refused", ("Connection refused", "connection refused", "ECONNREFUSED",
                                              "ConnectionRefusedError")),
    # A dial that times out to anything but DNS (port 53, read above as dns.errors): the dependency is unreachable.
    Rule("app.errors", "connection-timeout", ("i/o timeout", "Connection timed out", "connection timed out",
                                              "ETIMEDOUT", "ConnectTimeoutError"),
         _rx(r"(?:dial tcp|connect|Connection|connection|ETIMEDOUT|ConnectTimeoutError)(?!.*:53\b)")),
    # The entrypoint cannot run: missing, not executable, or built for another CPU (exec format error).
    Rule("app.errors", "entrypoint", ("exec format error", "executable file not found", ": not found",
                                      "Permission denied", "no such file or directory"),
         _rx(r"exec format error|executable file not found in \$PATH|^\S*/bin/(?:ba|da)?sh: (?:\d+: )?\S+: not found|"
             r"exec(?:ve)?[: ].{0,80}(?:[Pp]ermission denied|no such file or directory)")),
    Rule("app.errors", "file-not-found", ("FileNotFoundError", "No such file or directory",
                                          "no such file or directory", "ENOENT")),
    Rule("app.errors", "permission-denied", ("PermissionError", "Permission denied", "permission denied",
                                             "EACCES", "Operation not permitted")),
    Rule("app.errors", "model-load", ("oad model", "oading model", "oad the model", "hecksum", "sha256",
                                      "ash mismatch", "Can't load", "loading state_dict", "SafetensorError",
                                      "failed to load '"),
         _rx(r"(?i:failed|unable|could not|cannot|error) (?:to )?load(?:ing)? (?:the )?model|"
             r"(?i:checksum|sha256|hash) (?:mismatch|verification failed|does not match)|[Cc]hecksum failed|"
             r"Can't load (?:the )?(?:model|tokenizer|config|weights)|Error\(s\) in loading state_dict|"
             r"SafetensorError|failed to load '[^']+' version")),
)

# A KeyError is a config error when the code that raised it was reading configuration.
_CONFIG_CONTEXT = _rx(r"environ|config|cfg|settings|getenv")
_KEY_ERROR = _rx(r"\bKeyError: ")
# A value that fails to convert (ValueError and its kin: binascii.Error, json's JSONDecodeError, UnicodeDecodeError)
# is a setting that is wrong when the frame that raised it read the environment: `int(os.environ.get("PORT"))`
# meeting the `tcp://10.0.0.1:80` the kubelet's service links put in <SVC>_PORT, a hex secret that is not hex
# (jupyterhub app.py init_secrets: binascii.a2b_hex of env[JPY_COOKIE_SECRET]). Only the environment, not "config":
# ML code names its model's config in frames that raise for other reasons.
_VALUE_ERROR = _rx(r"^\s*(?:[\w.]+\.)?(?:ValueError|binascii\.Error|JSONDecodeError|UnicodeDecodeError): ")
_ENV_CONTEXT = _rx(r"environ|getenv|\benv\[|[a-z]_env\b")
_CONTEXT_NEEDLES = ("KeyError", "ValueError", "binascii.Error", "JSONDecodeError", "UnicodeDecodeError")
# A pasted shell command that greps for these strings is not evidence of them.
_COMMAND = _rx(r"^\s*(?:[$#>]\s|sudo\s|e?grep\s)|\|\s*(?:e?grep|rg)\s")
# The kubelet's report of a failed probe quotes the probe's own output: a refused or timed-out connection there is
# the probe's to the container (nothing listens yet), not the application's to a dependency. Structured from 1.20
# ("Probe failed" probeType=...), a sentence before ("<Kind> probe for <pod>:<container> failed", and the event's
# "<Kind> probe failed: ..."): kubernetes pkg/kubelet/prober/prober.go, 1.8-1.31.
_PROBE_REPORT = _rx(r'"Probe failed" probeType=|\b(?:Liveness|Readiness|Startup) probe (?:for .{1,200}? )?failed\b')


def _needle_table() -> dict[str, list[int]]:
    table: dict[str, list[int]] = {}
    for index, rule in enumerate(RULES):
        for needle in rule.needles:
            table.setdefault(needle, []).append(index)
    return table


_RULES_OF = _needle_table()  # needle -> indexes of the rules it can trigger
for _needle in _CONTEXT_NEEDLES:  # lines read with the frames before them (_config_context_error), by no rule
    _RULES_OF.setdefault(_needle, [])


@dataclass
class _Scan:
    first: dict[tuple[str, object], int] = field(default_factory=dict)  # (fact, value) -> line

    def see(self, fact: str, value: object, line: int) -> None:
        self.first.setdefault((fact, value), line)


def _is_nccl_line(line: str) -> bool:
    return " NCCL " in line or "NCCL INFO" in line


def _apply(scan: _Scan, line: str, n: int, rule_index: int) -> None:
    rule = RULES[rule_index]
    if (rule.fact, rule.value) not in scan.first and _matches(rule, line):
        scan.see(rule.fact, rule.value, n)


def _config_context_error(scan: _Scan, lines: list[str], n: int) -> None:
    """`KeyError: 'model'` right after a frame that reads config or os.environ; a ValueError (or kin) right after a
    frame that reads the environment."""
    line = lines[n - 1]
    if "Error" not in line:
        return
    context = " ".join(lines[max(0, n - 4): n - 1])
    if ((_KEY_ERROR.search(line) and _CONFIG_CONTEXT.search(context))
            or (_VALUE_ERROR.match(line) and _ENV_CONTEXT.search(context))):
        scan.see("app.errors", "config", n)


def scan_lines(lines: list[str]) -> _Scan:
    """First line of each (fact, value) the rules find; "KeyError" is one of the needles."""
    scan = _Scan()
    found = find_needles(lines, _RULES_OF)
    for index in sorted(found):
        n, line = index + 1, lines[index]
        if _is_nccl_line(line) or ("grep" in line and _COMMAND.search(line)) or _PROBE_REPORT.search(line[:2000]):
            continue
        for rule_index in dict.fromkeys(i for needle in found[index] for i in _RULES_OF[needle]):
            _apply(scan, line, n, rule_index)
        if any(needle in found[index] for needle in _CONTEXT_NEEDLES):
            _config_context_error(scan, lines, n)
    return scan


def _distinct(facts: list[Fact]) -> list[Fact]:
    """Drop a fact both readers emitted from the same line."""
    seen: set[tuple[str, str, int, int]] = set()
    out: list[Fact] = []
    for fact in facts:
        key = (fact.name, repr(fact.value), fact.citation.start, fact.citation.end)
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out


# PyTorch's message: "Tried to allocate 20.00 MiB (GPU 0; 14.76 GiB total capacity; 4.37 GiB already allocated;
# 14.75 MiB free; 4.43 GiB reserved in total by PyTorch)". What is neither free nor PyTorch's belongs to someone else.
_TORCH_OOM = _rx(r"(?P<total>\d+(?:\.\d+)?) (?P<tu>[KMGT]i?B) total capacity;(?:[^;]{0,80};){0,3} "
                 r"(?P<free>\d+(?:\.\d+)?) (?P<fu>[KMGT]i?B) free; "
                 r"(?P<reserved>\d+(?:\.\d+)?) (?P<ru>[KMGT]i?B) reserved in total by PyTorch")
_UNIT = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _held_elsewhere(line: str) -> float | None:
    m = _TORCH_OOM.search(line[:4096])
    if m is None:
        return None
    total, free, reserved = (float(m.group(k)) * _UNIT[m.group(u)[0]]
                             for k, u in (("total", "tu"), ("free", "fu"), ("reserved", "ru")))
    if total <= 0 or free + reserved > total:
        return None
    return round((total - free - reserved) / total, 3)


# How long a model server spent loading and warming up, as it reports it: vLLM's "init engine (profile, create
# kv cache, warmup model) took 90.84 seconds", "Graph capturing finished in 37 secs", weights "took N seconds".
_LOAD_TIME = _rx(r"(?i)(?:model loading|loading (?:model )?weights|init engine\b|warm(?:ing)?[ -]?up\b|"
                 r"graph capturing finished)[^\n]{0,80}?\b(?:took|in)\s+(\d+(?:\.\d+)?)\s*(?:seconds|secs?|s)\b")


def _load_time(sink: FactSink, lines: list[str]) -> None:
    """The longest load or warm-up the server logged."""
    best: tuple[float, int] | None = None
    for n, line in enumerate(lines, start=1):
        if "took" not in line and "finished in" not in line:
            continue
        if (m := _LOAD_TIME.search(line[:2000])) is not None and (best is None or float(m.group(1)) > best[0]):
            best = (float(m.group(1)), n)
    if best is not None:
        sink.add("model.load_seconds", best[0], best[1])


def _oom_figures(sink: FactSink, lines: list[str]) -> None:
    """The request and the cache's idle memory from the first PyTorch OOM message that states them."""
    for n, line in enumerate(lines, start=1):
        if "Tried to allocate" not in line or ("grep" in line and _COMMAND.search(line)):
            continue
        end, figures = n, cuda_oom.read_figures(line)
        if figures is None and n < len(lines):  # a paste may wrap the one-line message onto the next line
            end, figures = n + 1, cuda_oom.read_figures(f"{line} {lines[n].strip()}")
        if figures is None:
            continue
        sink.add("cuda.oom_request_bytes", figures.requested, n, end)
        sink.add("cuda.reserved_unallocated_bytes", figures.reserved_unallocated, n, end)
        sink.add("cuda.reserved_unallocated_ratio", figures.unallocated_share, n, end)
        if (share := figures.allocated_share) is not None:
            sink.add("cuda.allocated_ratio", share, n, end)
        return


def parse(artifact: Artifact) -> ParseResult:
    """Facts from an application log, including any NCCL / PyTorch distributed output in it."""
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    found = sorted(scan_lines(lines).first.items(), key=lambda item: item[1])
    for (fact, value), line in found:
        sink.add(fact, [value] if fact == "app.errors" else value, line)
        if fact == "cuda.oom" and (ratio := _held_elsewhere(lines[line - 1])) is not None:
            sink.add("cuda.memory_held_elsewhere_ratio", ratio, line)
    _oom_figures(sink, lines)
    _load_time(sink, lines)
    train_log.emit(sink, lines)
    dist_init.emit(sink, lines)
    horovod_stall.emit(sink, lines)
    access_log.read_app_server_lines(sink, lines)
    nccl.emit(sink, nccl.scan_lines(lines, artifact.command))
    sink.result.facts = _distinct(sink.result.facts)
    return sink.done()


def _matches(rule: Rule, line: str) -> bool:
    return rule.pattern is None or rule.pattern.search(line) is not None


PARSER = Parser(kinds=(ArtifactKind.CONTAINER_LOG,), parse=parse, sniff=sniff, claims_line=claims_line)
