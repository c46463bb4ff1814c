"""Facts read from Prometheus scrapes and query results, NVML snapshots and container logs."""

from collectors.vocab.spec import FactSpec

FACTS: list[FactSpec] = [
    FactSpec("gpu.util_percent", "float", "highest GPU utilisation seen", "max", "100"),
    FactSpec("gpu.fb_used_ratio", "float", "framebuffer used / total, highest seen", "max", "0.97"),
    FactSpec("gpu.sm_active_ratio", "float",
             "DCGM_FI_PROF_SM_ACTIVE: share of time the SMs had work, highest GPU",
             "max", "0.2"),
    FactSpec("gpu.gr_engine_active_ratio", "float",
             "DCGM_FI_PROF_GR_ENGINE_ACTIVE: share of time the graphics/compute engine was busy (right on MIG)",
             "max", "0.25"),
    FactSpec("gpu.sm_occupancy_ratio", "float", "DCGM_FI_PROF_SM_OCCUPANCY: resident warps / maximum", "max"),
    FactSpec("gpu.tensor_active_ratio", "float", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE: tensor pipe busy share", "max"),
    FactSpec("gpu.dram_active_ratio", "float",
             "DCGM_FI_PROF_DRAM_ACTIVE (or dmon's mem / 100): share of time device memory was busy", "max", "0.8"),
    FactSpec("gpu.pcie_rx_saturation", "float",
             "PCIe host-to-device bytes/s over what the negotiated link (generation x width) carries, highest GPU",
             "max", "0.92"),
    FactSpec("gpu.pcie_link_degraded", "bool",
             "a GPU's PCIe link trained below its maximum generation or width", "any"),
    FactSpec("gpu.pcie_replays", "int",
             "PCIe replay counter of the worst GPU (NVML, or DCGM field 202 DCGM_FI_DEV_PCIE_REPLAY_COUNTER): "
             "link-level retransmissions since driver load, a sign of a marginal link", "max", "212"),
    FactSpec("gpu.nvlink_errors", "int",
             "NVLink data-link errors (CRC flit + CRC data + replay + recovery) summed over the active links of the "
             "worst GPU, counted since driver load (NVML, or nvidia-smi nvlink -e's replay, recovery and CRC "
             "counters per link)", "max", "1937"),
    FactSpec("gpu.nvlink_inactive_links", "int",
             "NVLinks reported inactive on a GPU whose other links are up (NVML), the most on any GPU", "max", "1"),
    FactSpec("gpu.job_util_percent", "float",
             "GPU-Util of the GPUs a job computes on (nvidia-smi's Processes joined to its GPU rows; processes of "
             "one name are one job): the job's busiest GPU, the least busy job if several; GPUs with no compute "
             "process are left out; or the lowest GPU-Util a person states in a sentence (stated:gpu-util-figure, "
             "gpu-util-bare-figure, nvidia-smi-util-figure); or an exporter's GPU utilisation per container "
             "(gpu-manager's container_gpu_utilization)",
             "min", "18"),
    FactSpec("gpu.job_util_gap_percent", "float",
             "GPU-Util points between the busiest and the least busy GPU one job computes on (nvidia-smi's "
             "Processes joined to its GPU rows, gpustat's process owners), the widest of any job: one GPU of a "
             "job doing far less than its others", "max", "41"),
    FactSpec("gpu.table_util_gap_percent", "float",
             "GPU-Util points between the busiest GPU of an nvidia-smi table that lists no process (it holds a "
             "tenth of its memory or more) and a GPU of the same table that holds under 2% of its memory: one "
             "GPU given to the job computes, another sits unused", "max", "47"),
    FactSpec("job.said_running", "bool",
             "a person says their job ran when the evidence was taken, or runs slowly ('a snapshot during a small "
             "simulation', 'training is very slow'): an idle GPU beside it is the job's (stated:job-running)", "any"),
    FactSpec("train.input_said_slow", "bool",
             "a person says the input side is slow or what the job waits for: the data loader, the sampler, "
             "preprocessing, the disk, 'waiting for data', num_workers=0, CPU-bound (stated:input-said-slow)", "any"),
    FactSpec("train.scaling_said_slower", "bool",
             "a person says their job spread over more GPUs or machines runs slower than on one ('even slower than "
             "training on one machine with one gpu'): the time goes to synchronising them (stated:scaling-said-slower)",
             "any"),
    FactSpec("train.batch_said_small", "bool",
             "a person says each step gets one sample or a small batch ('the single-image generation', 'batch size "
             "1', 'one request at a time'): the GPU is given little work per launch (stated:batch-said-small)",
             "any"),
    FactSpec("train.scaling_said_flat", "bool",
             "a person says their job's throughput or speed stays the same however many GPUs it is given ('the "
             "throughput remained constant regardless of the number of GPUs'): the GPUs added do no work "
             "(stated:scaling-said-flat)", "any"),
    FactSpec("gpu.util_swings", "bool",
             "a person says the GPU-Util swings between busy and idle ('fluctuates between 0 and 100', 'jumps "
             "from 89% to 0%'): the GPU computes in bursts and waits between them (stated:gpu-util-swings)", "any"),
    FactSpec("gpu.job_util_avg_percent", "float",
             "a batch job's GPU utilisation averaged over its GPUs and its run so far (Slurm jobstats' Overall "
             "Utilization); unlike gpu.job_util_percent it is a mean, so one busy GPU can hide behind idle ones",
             "min", "33"),
    FactSpec("gpu.process_count", "int", "processes nvidia-smi lists on one GPU, the most on any GPU", "max"),
    FactSpec("gpu.temp_c", "float", "highest GPU temperature", "max", "91"),
    FactSpec("gpu.sm_clock_ratio", "float",
             "SM clock now over the GPU's maximum SM clock (nvidia-smi -q's Clocks and Max Clocks), the lowest "
             "GPU: low on an idle GPU by design, so it tells a clock that did not ramp only beside work",
             "min", "0.07"),
    FactSpec("gpu.throttle_reasons", "list[str]",
             "active clock throttle reasons: thermal (hw), sw-thermal, power (sw power cap), power-brake, "
             "hw-slowdown; benign idle/app-clock bits are left out", "union", "thermal"),
    FactSpec("gpu.ecc_dbe", "int", "uncorrectable (double-bit) ECC errors", "max"),
    FactSpec("gpu.ecc_sbe", "int", "corrected (single-bit) ECC errors", "max"),
    FactSpec("gpu.row_remap_failed", "bool",
             "row remapping failed, or a remap waits for a GPU reset (DCGM and NVML cannot say why a remap is "
             "pending; nvidia-smi -q can, and counts only one for uncorrectable errors)", "any"),
    FactSpec("cuda.oom", "bool", "CUDA out of memory reported by the application", "any"),
    FactSpec("cuda.memory_held_elsewhere_ratio", "float",
             "share of the GPU's memory held outside the failing process when CUDA ran out: (total capacity - "
             "reserved by PyTorch - free) / total, from PyTorch's out-of-memory message", "max", "0.66"),
    FactSpec("cuda.oom_request_bytes", "int",
             "the allocation that failed, from PyTorch's out-of-memory message (Tried to allocate ...)", "max",
             "2695091978"),
    FactSpec("cuda.reserved_unallocated_bytes", "int",
             "GPU memory PyTorch's caching allocator held but no tensor used when CUDA ran out (reserved - "
             "allocated, or the 'reserved by PyTorch but unallocated' figure); at least the failed request "
             "means the memory was there but not in one piece (fragmentation)", "max", "8224857210"),
    FactSpec("cuda.reserved_unallocated_ratio", "float",
             "reserved-but-unallocated over all memory PyTorch reserved, from its out-of-memory message",
             "max", "0.55"),
    FactSpec("cuda.allocated_ratio", "float",
             "share of the GPU's capacity the failing process's live tensors held when CUDA ran out (allocated / "
             "total capacity, from PyTorch's out-of-memory message): near 1, the model, batch or cache itself "
             "fills the GPU", "max", "0.97"),
    FactSpec("cuda.unavailable", "bool",
             "the application found no usable GPU: the CUDA runtime could not start (no CUDA-capable device, a "
             "driver too old for or mismatched with the runtime: CUDA errors 35, 100, 803, 804) or the framework "
             "was built without CUDA", "any"),
    FactSpec("cuda.ecc_uncorrectable", "bool",
             "the CUDA runtime told the application an uncorrectable ECC error was encountered", "any"),
    FactSpec("model.load_seconds", "float",
             "the longest model load or GPU warm-up the server logged (weights loading, engine init with KV-cache "
             "profiling and warm-up, CUDA graph capture), in seconds", "max", "90.84"),
    FactSpec("train.data_wait_ratio", "float",
             "share of each training iteration spent waiting for its batch, from the training loop's step timings "
             "(data time over iteration time; the running average where the loop prints one), last step line; or "
             "the CPU total share of the DataLoader's next-batch op in a PyTorch profiler table",
             "max", "0.9"),
    FactSpec("train.loader_few_workers", "bool",
             "the training framework warned that a DataLoader has few worker processes for the CPUs available "
             "(PyTorch Lightning's 'does not have many workers which may be a bottleneck')", "any"),
    FactSpec("train.gpu_left_unused", "bool",
             "the training framework found a CUDA GPU and runs without it (PyTorch Lightning's 'GPU available: "
             "True (cuda), used: False', 'GPU available but not used')", "any"),
    FactSpec("train.loader_workers_suggested", "int",
             "the worker count the few-workers warning suggests: the CPUs the machine can give the loader "
             "('try 16 which is the number of cpus', '`num_workers=47`'); 2 or fewer leaves no CPUs to add", "max",
             "16"),
    FactSpec("memory.working_set_ratio", "float", "container working set / memory limit, highest seen", "max",
             "0.99"),
    FactSpec("memory.growing", "bool", "working set grew steadily over the window (a leak shape)", "any"),
    FactSpec("memory.limit_said_too_low", "bool",
             "the paste says in words that the container's limits are too small or too low for it (\"the limits "
             "set for the init container are too small for it to run\"): the writer's reading of an OOM kill",
             "any"),
    FactSpec("node.memory_available_ratio", "float", "node MemAvailable / MemTotal, lowest seen", "min"),
    FactSpec("node.cpu_steal_ratio", "float", "share of CPU time stolen by the hypervisor", "max"),
    FactSpec("cpu.busy_ratio", "float",
             "CPU in use over what is available: container usage / its CPU limit, or 1 - idle in top's summary",
             "max", "0.97"),
    FactSpec("cpu.iowait_ratio", "float", "share of CPU time waiting for I/O (top's wa, node_exporter iowait)",
             "max", "0.3"),
    FactSpec("http.error_ratio", "float",
             "failed requests / all requests: 5xx at the ingress (ingress-nginx) or mesh (Istio), Triton "
             "inference failures, or the 5xx share of the requests in a pasted access log", "max", "0.08"),
    FactSpec("http.requests", "int", "requests read from an access log", "max", "120"),
    FactSpec("http.error_statuses", "list[int]", "distinct 5xx statuses in an access log, most frequent first",
             "union", "503"),
    FactSpec("http.failing_upstreams", "list[str]",
             "upstreams (ingress upstream, Envoy cluster, HAProxy backend, target group; else the route or path) "
             "that answered at least 5% of their requests with 5xx in an access log, worst first", "union",
             "ml-triton-8000"),
    FactSpec("http.failure_kinds", "list[str]",
             "how the 5xx of an access log failed, across proxies: no-upstream (no ready endpoint or healthy "
             "host), connection-failure (could not connect, or the connection was lost), timeout, overflow (a "
             "circuit breaker or full queue shed it), app-error (the backend itself answered 5xx), invalid-response "
             "(the backend answered something the proxy could not read: nginx's 'upstream sent invalid header'), "
             "no-route (Envoy's "
             "NR: no route for the host and path, read from a log line); most frequent first", "union", "no-upstream"),
    FactSpec("http.failing_backend", "str",
             "the one backend address of an upstream that answers 5xx while the others answer cleanly",
             example="10.244.1.17:8080"),
    FactSpec("http.failing_version", "str",
             "the one version (canary) that carries the errors while the others stay clean", example="v2"),
    FactSpec("latency.p99_seconds", "float", "service p99 latency", "max", "0.8"),
    FactSpec("latency.fastest_seconds", "float",
             "the fastest request a proxy's live table shows for a route (linkerd viz top's Best): every request of "
             "that route took at least this long; the slowest route's", "max", "10"),
    FactSpec("latency.queue_share", "float", "share of request time spent queued", "max", "0.7"),
    FactSpec("serving.waiting_requests", "int",
             "requests waiting in an inference server's queue for a slot (the most seen): vLLM's "
             "num_requests_waiting or its stats line's Waiting/Pending, TGI's tgi_queue_size, Triton's "
             "nv_inference_pending_request_count (collectors/catalogs/figures.yaml)", "max", "184"),
    FactSpec("serving.running_requests", "int",
             "requests an inference server computes at once (the most seen): vLLM's num_requests_running or "
             "Running, TGI's tgi_batch_current_size", "max", "72"),
    FactSpec("serving.kv_cache_usage_ratio", "float",
             "share of an LLM server's KV cache in use (the highest seen): vLLM's gpu_cache_usage_perc / "
             "kv_cache_usage_perc, or its stats line's GPU KV cache usage", "max", "0.998"),
    FactSpec("serving.preemptions", "int",
             "requests an LLM server took off the GPU mid-generation because its KV cache had no free block left, "
             "to recompute or swap back in later (the most seen): vLLM's preemption warning "
             "(total_num_cumulative_preemption) or its vllm:num_preemptions_total counter "
             "(collectors/catalogs/gpu_stack.yaml, figures.yaml)", "max", "51"),
    FactSpec("serving.decode_tokens_per_second", "float",
             "tokens an LLM server generates per second for each request it runs: its stats lines' generation "
             "throughput over their running requests, summed over the lines of one block (vLLM's 'Avg generation "
             "throughput' and 'Running', SGLang's 'gen throughput (token/s)' and '#running-req'); the highest seen",
             "max", "0.4"),
    FactSpec("serving.decode_only_tokens_per_second", "float",
             "tokens an LLM server generates per second for each request it runs, over the stats lines of windows "
             "that only decoded (SGLang's 'Decode batch' lines; vLLM's lines whose 'Avg prompt throughput' is 0), "
             "each line's generation throughput over its own running requests: the speed a request is served at "
             "with no prefill mixed in; the highest seen", "max", "23.2"),
    FactSpec("serving.requests_queued", "bool",
             "requests said to wait in an inference server's queue for their turn (a person's words, stated: "
             "collectors/catalogs/stated.yaml requests-queued)", example="true"),
    FactSpec("serving.max_num_seqs", "int",
             "the most sequences an LLM server schedules at once, as its command line or printed arguments set it "
             "(vLLM's --max-num-seqs / max_num_seqs; its default is 256, 1024 on some hardware)", "min", "1"),
    FactSpec("serving.ttft_seconds", "float",
             "time to first token in seconds (the highest seen), as an LLM server or its benchmark reported it: "
             "mean, median or a percentile", "max", "60"),
    FactSpec("serving.queue_seconds", "float",
             "the longest one request waited in an inference server's queue before it ran, as the server logged "
             "it for that request (TGI's queue_time span field, TorchServe's QueueTime metric line; "
             "collectors/catalogs/figures.yaml)", "max", "161.45"),
    FactSpec("serving.token_seconds", "float",
             "the longest an inference server took per generated token of one request, as it logged it for that "
             "request (TGI's time_per_token span field)", "max", "0.25"),
    FactSpec("traffic.increase_ratio", "float", "request rate now / baseline", "max", "4.0"),
    FactSpec("traffic.idle_pods", "list[str]",
             "pods of a service that served no requests in the window while others did", "union",
             "triton-7c9d-2"),
    FactSpec("dns.error_ratio", "float", "CoreDNS SERVFAIL+NXDOMAIN / all responses", "max"),
    FactSpec("dns.p99_seconds", "float", "CoreDNS p99 request duration", "max"),
    FactSpec("dns.errors", "bool", "the application failed to resolve names", "any"),
    FactSpec("dns.lookup_seconds", "float",
             "the slowest name lookup a client timed (curl time_namelookup, dig's Query time) or a DNS capture shows "
             "(tcpdump: a query to its answer)", "max",
             "5.513"),
    FactSpec("dns.said_slow", "bool",
             "name lookups said in words to be slow or to delay requests (\"slow DNS queries\", \"DNS overhead was "
             "causing delays\"), or requests said measurably faster once names skipped the search path (a trailing "
             "dot, a lower ndots)", "any"),
    FactSpec("net.mtu_mismatch", "bool",
             "interfaces on the path disagree on MTU: an overlay tunnel with no room for its header on the uplink "
             "(VXLAN/Geneve 50, WireGuard 60, IP-in-IP 20 bytes), or a pod interface wider than the tunnel or "
             "uplink it sends into", "any"),
    FactSpec("net.large_payloads_stall", "bool",
             "large responses, files or packets said to stall or time out while (by implication) small ones pass: "
             "the size-dependent stall a path MTU too small for full-size packets gives", "any"),
    FactSpec("net.mtus", "list[str]", "interfaces that are up and their MTUs, as name=mtu", "union", "eth0=9001"),
    FactSpec("app.retries", "bool", "the application logs retries or retry storms", "any"),
    FactSpec("app.shm_exhausted", "bool",
             "shared memory (/dev/shm) ran out: DataLoader bus error, or no space left writing to /dev/shm",
             "any"),
    FactSpec("app.memory_monitor_kill", "bool",
             "a framework's own memory monitor (Ray's raylet) killed a worker because the node's memory use crossed "
             "its threshold, before the kernel's OOM killer would have", "any"),
    FactSpec("app.child_sigkilled", "bool",
             "a process in the container reports that one of its child processes was killed by SIGKILL (stress's "
             "worker, a PyTorch DataLoader worker): inside a container only the kernel's OOM killer kills one "
             "process and spares its parent, so on a runtime that does not report OOMKilled this is the OOM kill",
             "any"),
    FactSpec("startup.dependency_fatal", "bool",
             "the application logged the record it exits after (a fatal log record, an uncaught panic or exception, "
             "a start-up script's error before exit 1) and it names a dependency it could not reach: refused, timed "
             "out or not resolved", "any"),
    FactSpec("app.storage_fatal", "bool",
             "the application logged the record it exits after (a fatal log record, an uncaught panic or exception) "
             "and it names its own storage failing: no space left on device, an I/O error, a read-only file system "
             "or an exceeded disk quota; the error does not clear on a restart", "any"),
    FactSpec("app.errors", "list[str]", "normalised application failures: traceback, config, "
             "connection-refused, connection-timeout, entrypoint (the command cannot run: not found, not executable, "
             "exec format error), file-not-found, permission-denied, model-load, missing-module", "union", "config"),
]
