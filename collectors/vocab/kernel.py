"""Facts read from the kernel log, conntrack counters and cgroup cpu.stat."""

from collectors.vocab.spec import FactSpec

FACTS: list[FactSpec] = [
    FactSpec("xid.codes", "list[int]", "distinct NVIDIA Xid codes seen", "union", "[79]"),
    FactSpec("nvswitch.sxid_codes", "list[int]",
             "distinct NVSwitch SXid codes seen (10000 and up): the switch driver's `nvidia-nvswitch<N>: SXid` "
             "kernel lines and the fabric manager's `detected NVSwitch fatal error` lines; "
             "collectors/catalogs/sxid.yaml names each code's switch unit", "union", "[24007]"),
    FactSpec("xid.primary_codes", "list[int]",
             "Xid codes that are not usually an after-effect of another error (45 is excluded)", "union"),
    FactSpec("xid.count", "int", "Xid lines seen", "sum"),
    FactSpec("xid.hosts", "list[str]",
             "hosts whose kernel log shows an Xid: the host in a syslog or journal prefix, or the node a node's "
             "own kernel log was read from", "union", "gpu-node-7"),
    FactSpec("xid.pci_bus_ids", "list[str]", "PCI bus ids of GPUs that reported an Xid", "union",
             "0000:2b:00"),
    FactSpec("gpu.identities", "list[str]",
             "each GPU the evidence identifies, as `uuid=GPU-… serial=… bus=0000:af:00` with the parts it gives: "
             "nvidia-smi -q's GPU UUID, Serial Number and Bus Id, nvidia-smi -L's UUID, dcgm-exporter's UUID and "
             "pci_bus_id labels; recurrence joins them to an Xid's bus id", "union",
             "uuid=gpu-8f639255-9bdd-d28c-78be-e05a47c7049e bus=0000:af:00"),
    FactSpec("gpu.fallen_off_bus", "bool", "the GPU fell off the bus or is lost, with or without an Xid line",
             "any"),
    FactSpec("gpu.gsp_timeout", "bool",
             "the NVIDIA driver's GSP firmware stopped answering (a late heartbeat or a timed-out RPC): the GPU "
             "is wedged until it is reset", "any"),
    FactSpec("gpu.nvrm_errors", "list[str]",
             "GPU faults the NVIDIA kernel module (NVRM) reports outside an Xid line: init-failed (RmInitAdapter / "
             "rm_init_adapter failed: the driver could not bring the GPU up), reset-required (a call returned "
             "NV_ERR_RESET_REQUIRED or the GPU is in a full-chip reset), gpu-lost (NV_ERR_GPU_IS_LOST), "
             "probe-failed (the module's PCI probe failed), unsupported (the GPU is not supported by this driver)",
             "union", "init-failed"),
    FactSpec("kernel.oom_kill", "bool", "the kernel or memory-cgroup OOM killer fired", "any"),
    FactSpec("kernel.oom_memcg", "bool", "an OOM kill was confined to a memory cgroup (container limit)",
             "any"),
    FactSpec("kernel.oom_global", "bool", "an OOM kill was node-wide (constraint none: the node ran out)",
             "any"),
    FactSpec("kernel.system_oom_event", "bool",
             "the kubelet recorded a SystemOOM node event: cAdvisor placed the kill outside every container's "
             "limit. Kubelets before 1.21 on Linux 5.0+ misread container kills as such too (kubernetes#100483), "
             "so it makes a node-wide OOM likely, not certain", "any"),
    FactSpec("kernel.oom_victims", "list[str]", "processes the OOM killer killed", "union", "python"),
    FactSpec("kernel.oom_victim_score_adj", "int",
             "the oom_score_adj the kernel printed for a process it killed (Linux 4.19 on), the highest seen: the "
             "kubelet sets -997 for Guaranteed pods, 2-999 for Burstable, 1000 for BestEffort", "max", "992"),
    FactSpec("kernel.hung_task", "bool", "a task was blocked in the kernel for more than 120 s", "any"),
    FactSpec("conntrack.table_full", "bool", "`nf_conntrack: table full, dropping packet` seen", "any"),
    FactSpec("conntrack.drops", "int",
             "sum of drop + early_drop + insert_failed from `conntrack -S` or /proc/net/stat/nf_conntrack",
             "max"),
    FactSpec("conntrack.usage_ratio", "float", "conntrack entries / limit", "max", "0.99"),
    FactSpec("cpu.throttled_ratio", "float",
             "share of CPU (CFS) periods in which the container was throttled at its CPU limit: throttled periods "
             "/ periods", "max", "0.42"),
    FactSpec("cpu.nr_periods", "int", "CFS periods elapsed", "max"),
    FactSpec("cpu.nr_throttled", "int", "CFS periods in which the cgroup was throttled", "max"),
    FactSpec("cpu.limit_slowed", "bool",
             "latency fell when the CPU limit (its CFS quota) was removed or raised (said, or a benchmark tabulated by "
             "limit), or the container's CPU "
             "throttling is said to raise its latency, to be heavy, or to stop it short of its CPU, as an operator "
             "reports it",
             "any"),
]
