"""Facts read from Kubernetes objects, `kubectl describe`, events and kubelet logs."""

from collectors.vocab.spec import FactSpec

FACTS: list[FactSpec] = [
    # pod
    FactSpec("pod.name", "str", "name of the pod the evidence is about", example="checkout-7d9f-x2"),
    FactSpec("pod.namespace", "str", "namespace of that pod", example="shop"),
    FactSpec("pod.node", "str", "node the pod is bound to (empty while Pending)", example="gpu-node-2"),
    FactSpec("pod.phase", "str", "pod phase", example="Pending"),
    FactSpec("pod.setup_resolved", "bool",
             "every pod whose events show a volume mount, missing Secret/ConfigMap or sandbox failure has a later "
             "Started event (the kubelet started a container): the wait before the first container was transient",
             "any"),
    FactSpec("pod.status.reason", "str", "pod-level status reason", example="Evicted"),
    FactSpec("pod.status.message", "str", "pod-level status message",
             example="The node was low on resource: memory."),
    FactSpec("pod.qos_class", "str", "QoS class: Guaranteed, Burstable or BestEffort", example="Burstable"),
    FactSpec("pod.gpu_request", "int", "nvidia.com/gpu requested by the pod (sum over containers)", "max", "8"),
    FactSpec("pod.shm_volume", "bool", "an emptyDir with medium Memory is mounted at /dev/shm", "any"),
    FactSpec("pod.shm_size_bytes", "int",
             "the size of /dev/shm in the pod: the sizeLimit of the memory-backed emptyDir mounted there, or 64 MiB "
             "(the Docker/containerd default) when none is mounted and hostIPC is off; absent when the emptyDir has "
             "no sizeLimit; the tmpfs's own size where `df /dev/shm` or the node agent shows it", "min", "67108864"),
    FactSpec("pod.shm_used_ratio", "float",
             "how full /dev/shm is, 0 to 1: its Use% in `df /dev/shm` inside the pod, or used over size from the node "
             "agent's /v1/shm", "max", "0.98"),
    FactSpec("pod.host_network", "bool", "the pod uses hostNetwork", "any"),
    FactSpec("pod.rdma_request", "bool", "the pod requests an RDMA/InfiniBand device resource", "any"),
    FactSpec("pod.capabilities", "list[str]", "Linux capabilities added to containers", "union", "IPC_LOCK"),
    FactSpec("pod.tolerations", "list[str]",
             "pod tolerations as key=value:Effect (operator Equal) or key:Effect (Exists); `*` is an empty key, "
             "which tolerates every taint", "union", "nvidia.com/gpu:NoSchedule"),
    FactSpec("pod.priority_class", "str", "priorityClassName", example="best-effort-experiment"),
    FactSpec("pod.scheduler_name", "str", "schedulerName", example="volcano"),
    FactSpec("pods.names", "list[str]", "every pod seen in the evidence", "union"),
    FactSpec("pods.not_running", "list[str]", "pods whose phase is not Running or Succeeded", "union"),
    FactSpec("pods.pending", "list[str]", "pods in phase Pending", "union"),
    FactSpec("pods.placed", "list[str]",
             "pods a node has taken: a bound Node or spec.nodeName, or a status only the kubelet sets "
             "(ContainerCreating, Init:n/m, a container's waiting reason); pending such a pod is no scheduling wait",
             "union"),
    FactSpec("pods.all_ready", "bool",
             "every pod of a kubectl get pods table is Running with all its containers ready and none restarted in "
             "the last ten minutes: the restarts it counts are past ones", "any"),
    FactSpec("pods.node_count", "int", "distinct nodes the pods of one pod list run on", "max", "6"),
    FactSpec("pods.failing_count", "int",
             "pods of one pod list that are failing: not Running or Completed, waiting on an error, or restarted",
             "max", "3"),
    FactSpec("pods.failing_node", "str",
             "the node that holds the most failing pods of one pod list (absent on a tie)", example="node-xyz"),
    FactSpec("pods.failing_node_share", "float",
             "failing pods on pods.failing_node / all failing pods of that list: 1.0 when every failure sits on "
             "one node", example="1.0"),
    # container
    FactSpec("container.name", "str", "container the evidence is about", example="trainer"),
    FactSpec("container.image", "str", "image of that container", example="nvcr.io/nvidia/pytorch:24.05-py3"),
    FactSpec("container.last_terminated.reason", "str",
             "reason of the most recent termination (current Terminated state or Last State)",
             example="OOMKilled"),
    FactSpec("container.last_terminated.exit_code", "int", "exit code of the most recent termination",
             example="137"),
    FactSpec("container.waiting.reason", "str", "reason the container is waiting", example="CrashLoopBackOff"),
    FactSpec("container.waiting.message", "str", "message of the waiting state"),
    FactSpec("container.restart_backoff", "bool",
             "the kubelet is backing off restarts of a failed container (`Back-off restarting failed container`, "
             "CrashLoopBackOff)", "any"),
    FactSpec("container.restart_count", "int", "restarts of the container", "max", "12"),
    FactSpec("container.memory_limit_bytes", "int", "memory limit", "max", "214748364800"),
    FactSpec("container.memory_request_bytes", "int", "memory request", "max", "107374182400"),
    FactSpec("container.cpu_limit_millicores", "int", "CPU limit in millicores", "max", "2000"),
    FactSpec("container.not_oom_killed", "bool",
             "the paste says the container's kill was not the OOM killer's (\"it is not OOM killed\", \"no "
             "invocations of oom-killer\"): an exit code 137 then came from another SIGKILL", "any"),
    FactSpec("container.liveness_killed", "bool",
             "the kubelet restarted the container because its liveness probe failed", "any"),
    FactSpec("probe.failures", "list[str]", "probe kinds that failed: liveness, readiness, startup", "union"),
    FactSpec("gpu.container_hook_errors", "list[str]",
             "the NVIDIA container hook (nvidia-container-cli) failed to set a container up, so it never started: "
             "driver-timeout (the driver did not answer in time), nvml-gpu-error (NVML answered that "
             "the GPU itself failed: unknown error, GPU is lost, GPU requires reset, interrupt request issue), "
             "other (any other stage's error)", "union",
             "driver-timeout"),
    FactSpec("probe.liveness_delay_seconds", "int",
             "initialDelaySeconds of the pod's liveness probes (0 when unset), the smallest seen", "min", "60"),
    FactSpec("probe.readiness_delay_seconds", "int",
             "initialDelaySeconds of the pod's readiness probes (0 when unset), the smallest seen", "min", "10"),
    FactSpec("probe.startup_configured", "bool",
             "a startup probe guards the liveness probe; false when the pod spec was read and has none", "any"),
    # scheduling
    FactSpec("scheduling.failed", "bool", "a FailedScheduling event was seen", "any"),
    FactSpec("scheduling.resolved", "bool",
             "every pod with a FailedScheduling event was placed afterwards (a later Scheduled event, \"Successfully "
             "assigned <ns>/<pod> to <node>\"): the wait was transient", "any"),
    FactSpec("scheduling.reasons", "list[str]",
             "normalised FailedScheduling reasons: insufficient-gpu, insufficient-cpu, insufficient-memory, "
             "insufficient-other, untolerated-taint, node-affinity, pod-affinity, topology-spread, unbound-pvc, "
             "volume-node-affinity, volume-limit, volume-conflict, node-pressure, node-not-ready, unschedulable-node, "
             "too-many-pods, host-port, quota-exceeded, preemption-not-helpful", "union", "insufficient-gpu"),
    FactSpec("scheduling.message", "str", "the FailedScheduling message as printed"),
    FactSpec("scheduling.nodes_total", "int", "node count in the FailedScheduling message (0/N nodes)", "max"),
    FactSpec("scheduling.reason_nodes", "list[str]",
             "each normalised FailedScheduling reason with the nodes it rules out, as reason=count, the most nodes "
             "first (the counts the scheduler prints before each reason)", "union", "insufficient-cpu=23"),
    FactSpec("scheduling.leading_reasons", "list[str]",
             "the normalised FailedScheduling reasons that rule out the most nodes (several on a tie): the "
             "reason that weighs most", "union", "insufficient-cpu"),
    FactSpec("scheduling.preempted", "bool", "the pod was preempted by a higher-priority pod", "any"),
    FactSpec("quota.exceeded", "bool", "a ResourceQuota is exhausted or a create was refused for quota", "any"),
    FactSpec("quota.resources_at_limit", "list[str]", "quota resources whose used >= hard", "union",
             "requests.nvidia.com/gpu"),
    FactSpec("quota.unspecified_resources", "list[str]",
             "compute resources a ResourceQuota tracks that the refused pod's containers do not set (the "
             "apiserver's \"failed quota: <quota>: must specify ...\")", "union", "limits.memory"),
    FactSpec("quota.usage", "list[str]",
             "each ResourceQuota resource with a hard limit, used against hard as kubectl describe prints them, "
             "fullest first", "union", "requests.nvidia.com/gpu: 7 of 8 (87%) in resourcequota/ml/gpu-quota"),
    FactSpec("quota.used_ratio", "float", "used / hard of the fullest ResourceQuota resource (1.0: at its limit)",
             "max", "0.875"),
    FactSpec("gang.configured", "bool",
             "gang scheduling is configured (PodGroup minMember, Volcano minAvailable, Kubeflow "
             "schedulingPolicy, schedulerName volcano, a Kueue queue label); false when the job spec was read "
             "and has none", "any"),
    FactSpec("gang.min_available", "int", "minAvailable of the pod group", "max"),
    FactSpec("gang.unschedulable", "bool",
             "a gang scheduler says the pod group as a whole cannot be placed yet (Volcano \"N/M tasks in gang "
             "unschedulable\", coscheduling \"cannot find enough sibling pods\")", "any"),
    # events
    FactSpec("events.reasons", "list[str]", "distinct event reasons seen", "union", "BackOff"),
    FactSpec("eviction.seen", "bool", "the pod was evicted by the kubelet (not an OOM kill)", "any"),
    FactSpec("pod.disruption_target", "str",
             "why the pod is being removed, the reason of its DisruptionTarget condition (Kubernetes 1.26 on): "
             "EvictionByEvictionAPI (evicted through the API: a drain, the cluster autoscaler, Karpenter), "
             "PreemptionByScheduler, TerminationByKubelet (the kubelet's own eviction or a node shutdown), "
             "DeletionByTaintManager (a NoExecute taint), DeletionByPodGC", example="EvictionByEvictionAPI"),
    FactSpec("eviction.reclaiming", "bool",
             "the kubelet's eviction manager is reclaiming a resource: it evicts pods until the signal recovers",
             "any"),
    FactSpec("eviction.over_limit", "bool",
             "the kubelet evicted the pod for going over its own local-storage limit (a container's or the pod's "
             "ephemeral-storage limit, an emptyDir sizeLimit), not because the node ran low", "any"),
    FactSpec("eviction.over_request", "bool",
             "the kubelet's eviction message says the container it ranked first was using more than it requested "
             "(so the pod was not Guaranteed)", "any"),
    FactSpec("eviction.resource", "str", "resource the node was low on when it evicted", example="memory"),
    FactSpec("image.library_repository", "bool",
             "a pull refused as denied-or-missing names a repository under Docker Hub's docker.io/library/ (a bare "
             "name such as \"pull access denied for myapp\"), where every repository is public: it does not exist "
             "there (an image built locally and never pushed, a typo)", "any"),
    FactSpec("image.pull_error", "str",
             "normalised image pull failure: not-found, unauthorized, denied-or-missing (the registry will not say "
             "whether the repository is missing or private), timeout, unreachable (the registry's name does not "
             "resolve or nothing answers), rate-limited, no-space, tls, other",
             merge="specific", example="not-found"),
    FactSpec("image.name", "str", "image that failed to pull"),
    FactSpec("volume.mount_failed", "bool", "FailedMount or FailedAttachVolume seen", "any"),
    FactSpec("volume.errors", "list[str]",
             "normalised volume attach/mount failures: multi-attach (an RWO volume is still attached to another "
             "node), attach-failed, volume-not-ready (the CSI driver says its volume cannot serve yet: Longhorn's "
             "'is not ready for workloads'), csi-driver-missing (the CSI driver is not registered on the node), "
             "mount-failed, mount-timeout (timed out waiting for the volumes), pvc-not-found, secret-not-found, "
             "configmap-not-found, fsgroup-failed (the volume mounted but the pod's fsGroup could not be applied),"
             " object-not-registered (the kubelet's Secret/ConfigMap manager no longer tracks the pod: the race "
             "after a pod finished, kubernetes#105204)",
             "union", "multi-attach"),
    FactSpec("volume.ownership_slow", "bool",
             "the kubelet reported that giving a volume the pod's fsGroup (a recursive chown and chmod of every "
             "file) is taking longer than expected: a VolumePermissionChangeInProgress event", "any"),
    FactSpec("pod.missing_refs", "list[str]",
             "Secrets and ConfigMaps the pod references that do not exist, as kind/name", "union",
             "secret/db-credentials"),
    # fix round f9: a claim's own phase, as `kubectl get pvc` shows it (its STATUS column).
    FactSpec("pvc.pending", "list[str]",
             "PersistentVolumeClaims in phase Pending (not bound to a volume), from a `kubectl get pvc` row", "union",
             "data-postgres-0"),
    FactSpec("pvc.terminating", "bool",
             "a PersistentVolumeClaim is being deleted (deletionTimestamp set, held by a finalizer)", "any"),
    FactSpec("sandbox.errors", "list[str]",
             "normalised pod sandbox failures (FailedCreatePodSandBox): ip-exhausted (the CNI's IPAM has no "
             "address left), cni-not-ready (no CNI config or plugin on the node), cni-error, runtime-handler-missing "
             "(the RuntimeClass's handler is not configured in the runtime) and runtime-unreachable (the kubelet "
             "could not dial the runtime's socket), both before the CNI is called, runtime-error",
             "union", "ip-exhausted"),
    FactSpec("cni.ip_pool_used_ratio", "float",
             "the share of the node's CNI address pool given to pods, from the IPAM's own pool report (the AWS VPC CNI "
             "ipamd's pool stats, assigned / total): 1.0 means no free address is left on the node", "max", "1.0"),
    FactSpec("cni.pool_limits", "list[str]",
             "why the CNI could not grow the node's address pool: eni-limit (the instance can attach no more network "
             "interfaces), subnet-full (the subnet has no free addresses left to give the node)", "union",
             "eni-limit"),
    FactSpec("image.pull_seconds", "float", "how long the slowest image pull took (kubelet's Pulled event)", "max",
             "272.4"),
    FactSpec("image.pulling", "bool",
             "an image pull started and had not finished when the events were read (Pulling without Pulled); "
             "false when every pull seen finished", "any"),
    FactSpec("rollout.recent", "bool", "a rollout or scaling of the workload happened in the window", "any"),
    FactSpec("rollout.scaled_to_zero", "bool",
             "a replica set was scaled down to 0 (ScalingReplicaSet) and none was scaled up: a scale-down to zero "
             "replicas, not a rollout", "any"),
    # nodes
    FactSpec("node.name", "str", "node the evidence is about", example="gpu-node-2"),
    FactSpec("node.conditions", "list[str]",
             "abnormal node conditions: MemoryPressure, DiskPressure, PIDPressure, NotReady, "
             "NetworkUnavailable", "union", "MemoryPressure"),
    FactSpec("node.not_ready_reasons", "list[str]",
             "why a node is NotReady, from its Ready condition, events and kubelet log: kubelet-stopped-posting "
             "(no status from the kubelet: it is down or cut off), pleg-unhealthy, runtime-down, "
             "network-not-ready (CNI not initialised), kubelet-not-ready (other)", "union", "pleg-unhealthy"),
    FactSpec("node.unschedulable", "bool", "a node is cordoned", "any"),
    FactSpec("node.draining", "bool",
             "a node is being drained: its pods are evicted through the API to empty it (kubectl drain's "
             "evicting/evicted/drained lines, the cluster autoscaler's scale-down, Karpenter's disruption), which "
             "leaves no Evicted status on the pods; a cordon alone is node.unschedulable", "any"),
    FactSpec("node.graceful_shutdown", "bool",
             "the kubelet's shutdown manager saw the node being shut down (event Shutdown): the NotReady it then "
             "reports is the planned shutdown's own", "any"),
    FactSpec("node.taints", "list[str]", "node taints as key=value:Effect", "union",
             "gpu-unhealthy=true:NoSchedule"),
    FactSpec("node.addresses", "list[str]",
             "the node's addresses (InternalIP, ExternalIP, Hostname...): a scrape target's instance label may be "
             "any of them, with a port", "union", "10.0.1.10"),
    FactSpec("node.gpu_sharing", "str",
             "GPU sharing mode of the node: exclusive, time-slicing, mps, mig; processes: other processes said to "
             "share the GPU",
             example="time-slicing"),
    FactSpec("gpu.capacity_total", "int", "nvidia.com/gpu capacity summed over nodes seen", "sum"),
    FactSpec("gpu.allocatable_total", "int", "nvidia.com/gpu allocatable summed over nodes seen", "sum"),
    FactSpec("gpu.free_total", "int", "allocatable minus allocated GPUs, summed over nodes seen", "sum"),
    FactSpec("gpu.max_free_per_node", "int", "the most free GPUs on any single node seen", "max"),
    FactSpec("gpu.unhealthy_count", "int", "GPUs in capacity but not allocatable (marked unhealthy)", "sum"),
    FactSpec("gpu.device_plugin_no_gpus", "bool",
             "the NVIDIA device plugin found no GPU to advertise on its node: NVML would not initialise in its "
             "container (no driver, or no NVIDIA runtime to inject it), its discovery strategy matched nothing, or "
             "it found no devices and waits; the node then offers no nvidia.com/gpu (collectors/catalogs/"
             "gpu_stack.yaml)", "any"),
    # services
    FactSpec("endpoints.ready", "int", "ready endpoint addresses behind the service (Endpoints, EndpointSlices)",
             "sum", "0"),
    FactSpec("endpoints.not_ready", "int", "endpoint addresses that exist but are not ready", "sum", "3"),
    FactSpec("service.selector", "str", "the Service's pod selector as key=value pairs", example="app=checkout"),
    FactSpec("service.has_selector", "bool", "the Service selects pods (false: endpoints are managed by hand)",
             "any"),
    FactSpec("service.cluster_ips", "list[str]",
             "the Service's ClusterIPs (IPv4), from its description or a `kubectl get svc` row", "union",
             "10.96.112.7"),
    FactSpec("service.target_ports", "list[str]", "the Service's targetPorts as written: numbers or port names",
             "union", "8080"),
    FactSpec("pod.labels", "list[str]", "labels of a pod or of a workload's pod template, as key=value", "union",
             "app=checkout"),
    FactSpec("pod.container_ports", "list[str]",
             "ports the pod's containers declare, as number/name (- when unnamed)", "union", "8080/http"),
    FactSpec("netpol.ingress_selectors", "list[str]",
             "pod selectors (key=value,...; * for every pod) of NetworkPolicies whose ingress admits only the "
             "clients they name", "union", "app=checkout"),
    # joined across the paste (collectors/joins.py): a Service against the pods and policies beside it
    FactSpec("service.selector_matches_pods", "bool",
             "the Service's selector matches the labels of a pod (or pod template) pasted beside it, in its "
             "namespace", "any"),
    FactSpec("service.target_port_names_missing", "list[str]",
             "named targetPorts no container of the selected pods declares: the endpoints controller leaves "
             "those pods out", "union", "http"),
    FactSpec("service.target_port_numbers_undeclared", "list[str]",
             "numeric targetPorts none of the selected containers declares while they declare others "
             "(containerPort is informational, so a hint, not proof)", "union", "3000"),
    FactSpec("service.port_said_not_listened", "bool",
             "a person who looked inside the container says it does not listen on the port its traffic is sent to "
             "but on another (\"the nginx container doesnt have port 84 but its still listening on 80\")", "any"),
    FactSpec("netpol.dns_egress_blocked", "bool",
             "a NetworkPolicy or CiliumNetworkPolicy restricts its pods' egress and none of its rules lets DNS out "
             "(port 53 to kube-dns): every lookup from those pods times out", "any"),
    FactSpec("netpol.selects_backends", "bool",
             "a NetworkPolicy pasted beside the Service selects its pods and its ingress admits only the clients "
             "it names", "any"),
    # network clients (curl, wget, nc) run against a service
    FactSpec("client.errors", "list[str]",
             "what a network client printed when it could not reach its target: refused, reset, timeout, "
             "no-route, name-resolution, connect-failed (curl 7.88+ prints no reason)", "union", "refused"),
    FactSpec("client.targets", "list[str]", "the address (host:port, or host) the failing client connected to",
             "union", "10.96.112.7:8080"),
    FactSpec("client.upstream_refused", "bool",
             "a proxy that sends to the Service's endpoints directly (Envoy, nginx) was refused by one: an endpoint "
             "exists and nothing listens on the port it was sent to", "any"),
    FactSpec("client.loopback_refused", "list[str]",
             "a refused dial to the loopback (127.0.0.1:port, localhost:port): a client in the same network "
             "namespace found nothing listening there (joined with the pod's containerPorts)", "union",
             "127.0.0.1:8080"),
    FactSpec("client.ports_undeclared", "list[str]",
             "ports a client in the pod was refused on that none of the pod's containers declares, while they "
             "declare others: it dials a port the app does not listen on", "union", "8080"),
    FactSpec("portforward.refused_ports", "list[str]",
             "pod ports a kubectl port-forward was refused on inside the pod's network namespace (the runtime's "
             "socat or dial): nothing in the pod listens there", "union", "6000"),
    FactSpec("client.no_route_targets", "list[str]",
             "the addresses (host:port) a client was told there is no route to (EHOSTUNREACH, ENETUNREACH)",
             "union", "10.32.0.43:80"),
    FactSpec("service.target_ports_off_convention", "list[str]",
             "targetPorts of Service ports named for a protocol served on one port by convention (redis, postgres, "
             "mysql ...) and served on that port, that point at another number: a hint the Service targets the "
             "wrong container port (collectors/catalogs/port_names.yaml)", "union", "9121"),
    FactSpec("service.exposed_workloads", "list[str]",
             "workloads a `kubectl expose` command in the paste made a Service for: the Service's selector is "
             "copied from the workload's, so it selects that workload's pods", "union", "hello-minikube"),
    FactSpec("service.exposed_pods_ready", "bool",
             "the pods of a workload `kubectl expose` made the Service for are shown Running and ready in a pasted "
             "pod table: the Service has ready endpoints, so a refusal there is a port nothing listens on", "any"),
    FactSpec("client.cluster_ip_no_route", "list[str]",
             "ClusterIP:port targets of a pasted Service a client got no route to (an ICMP unreachable or a "
             "host-prohibited REJECT): the node's Service rules, not the pods, turned it away", "union",
             "10.32.0.43:80"),
    FactSpec("pod.probe_ports", "list[str]",
             "ports the containers' probes check (httpGet, tcpSocket, grpc), as kind:port, the port a number or "
             "a name", "union", "readiness:8080"),
    FactSpec("probe.ports_undeclared", "list[str]",
             "probe ports no container of the pod declares (a name that does not resolve fails every probe; a "
             "number is a hint), as kind:port", "union", "liveness:http"),
    FactSpec("proxy.sync_failed", "bool",
             "kube-proxy failed to program the service rules (iptables/IPVS), or its userspace balancer holds no "
             "entry for the Service", "any"),
    FactSpec("proxy.ipvs_no_destination", "list[str]",
             "IPVS virtual services (protocol and VIP:port) the kernel found no real server for (\"no destination "
             "available\"): a Service address with nothing behind it on that node", "union", "TCP 10.96.14.7:443"),
    FactSpec("ingress.sync_failed", "bool",
             "an ingress controller's change to its proxy's servers was refused (HAProxy's runtime API: no such "
             "server or backend): the proxy serves a stale server list", "any"),
    FactSpec("kubelet.hairpin_mode", "str", "the kubelet's --hairpin-mode (hairpin-veth, promiscuous-bridge, none)",
             example="none"),
    # distributed jobs
    FactSpec("netpol.count", "int", "NetworkPolicies in the namespace", "sum"),
    FactSpec("netpol.restricts_pods", "bool", "a NetworkPolicy selects the workload's pods", "any"),
    FactSpec("mesh.rbac_denied", "bool",
             "a service mesh's Envoy sidecar denied a request or a connection by its RBAC filter (an Istio "
             "AuthorizationPolicy): the response or termination detail rbac_access_denied_matched_policy[...]",
             "any"),
    FactSpec("hpa.at_max", "bool", "the HPA is at maxReplicas or reports ScalingLimited", "any"),
    FactSpec("hpa.max_replicas", "int", "maxReplicas of the HPA", "max"),
    FactSpec("hpa.metrics_unavailable", "bool",
             "the HPA cannot read the metric it scales on, so it does not scale: ScalingActive False "
             "(FailedGetResourceMetric, FailedGetPodsMetric, ...) or a current value of <unknown>", "any"),
]
