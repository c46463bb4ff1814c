"""The kustomize manifests: every overlay renders, validates strictly, and keeps the promises of docs/install.md.

Rendering uses `kubectl kustomize` (offline); validation uses `kubernetes-validate --strict` for built-in
kinds and tests/deploy/crd_schemas.py for the Prometheus Operator kinds it has no schema for. Beyond
schema validity, the tests hold the security contract: read-only RBAC without secrets, nodes/proxy only
in the kubelet-logs component, non-root read-only containers, read-only agent mounts, secrets referenced
and never committed, and settings that the real settings models accept.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml

from tests.deploy import crd_schemas
from tests.deploy.support import (
    BASE,
    COMPONENTS,
    DEPLOY,
    OVERLAYS,
    REPO,
    Doc,
    Variant,
    component_names,
    env_of,
    kubernetes_validate,
    load_yaml,
    load_yaml_all,
    of_kind,
    one,
    overlay_names,
    pod_specs,
    rendered,
    rendered_text,
    variants,
)

VARIANTS = variants()
IDS = [v.name for v in VARIANTS]
K8S_VERSIONS = ("1.28.0", "1.37.0")  # the oldest and newest Kubernetes the manifests are validated against
CRD_KINDS = set(crd_schemas.SCHEMAS)

EXPECTED_OVERLAYS = {"http-ingress", "socket-mode", "with-agent", "postgres-incluster", "postgres-external",
                     "kubelet-logs"}
READ_VERBS = {"get", "list", "watch"}
# Subresources that run or reach something rather than read an object.
DANGEROUS_RESOURCES = {"pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "services/proxy",
                       "serviceaccounts/token", "nodes/proxy", "pods/ephemeralcontainers", "pods/eviction"}
BOT_NAMESPACE = "triagebot"
AGENT_NAMESPACE = "triagebot-agent"
SANDBOXES = "/run/containerd/io.containerd.grpc.v1.cri/sandboxes"  # /dev/shm tmpfs per pod, for /v1/shm
AGENT_HOST_PATHS = {"/dev/kmsg", "/sys/fs/cgroup", "/var/lib/kubelet/pod-resources",
                    "/run/containerd/io.containerd.runtime.v2.task/k8s.io", SANDBOXES}
REQUIRED_AGENT_HOST_PATHS = {"/dev/kmsg", "/sys/fs/cgroup", "/var/lib/kubelet/pod-resources"}


@pytest.fixture(params=VARIANTS, ids=IDS)
def variant(request: pytest.FixtureRequest) -> Variant:
    v: Variant = request.param
    return v


def _containers(spec: Doc) -> list[Doc]:
    return list(spec.get("initContainers") or []) + list(spec["containers"])


def _bot(docs: list[Doc]) -> Doc:
    return one(docs, "Deployment", "triagebot")


def _bot_container(docs: list[Doc]) -> Doc:
    containers: list[Doc] = _bot(docs)["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "triagebot")


def _agents(docs: list[Doc]) -> list[Doc]:
    return [d for d in of_kind(docs, "DaemonSet") if d["metadata"]["namespace"] == AGENT_NAMESPACE]


# --- rendering and schema validation -----------------------------------------------------------------

def test_the_overlays_are_the_documented_ones() -> None:
    assert set(overlay_names()) == EXPECTED_OVERLAYS


def test_every_component_is_rendered_by_some_variant() -> None:
    used = {c for v in VARIANTS for c in v.components}
    assert set(component_names()) <= used, f"components never rendered: {set(component_names()) - used}"


def test_variant_renders(variant: Variant) -> None:
    docs = rendered(variant)
    assert docs, f"{variant.name} rendered nothing"
    for doc in docs:
        assert doc.get("apiVersion") and doc.get("kind") and doc.get("metadata", {}).get("name"), doc
    keys = [(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]) for d in docs]
    assert len(keys) == len(set(keys)), f"duplicate objects in {variant.name}"
    # Everything but cluster-scoped kinds lands in an explicit namespace, never `default`.
    cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PriorityClass"}
    for doc in docs:
        if doc["kind"] not in cluster_scoped:
            assert doc["metadata"].get("namespace") in (BOT_NAMESPACE, AGENT_NAMESPACE), doc["metadata"]


def test_kubernetes_validate_strict_passes_on_every_variant(tmp_path: Path) -> None:
    tool = kubernetes_validate()
    files = []
    for v in VARIANTS:
        path = tmp_path / f"{v.name}.yaml"
        path.write_text(rendered_text(v), encoding="utf-8")
        files.append(str(path))
    args = [a for version in K8S_VERSIONS for a in ("-k", version)]
    done = subprocess.run([tool, "--strict", "--quiet", *args, *files], capture_output=True, text=True,
                          timeout=300, check=False)
    out = done.stdout + done.stderr
    errors = [line for line in out.splitlines() if not line.startswith("WARN ")]
    assert done.returncode == 0 and not errors, out
    # Only the Prometheus Operator kinds may lack a schema; crd_schemas.py validates those instead.
    for line in out.splitlines():
        if line.startswith("WARN "):
            m = re.search(r"schema for kind (\w+) with api version (\S+)", line)
            assert m and m.group(1) in CRD_KINDS and m.group(2) == "monitoring.coreos.com/v1", line


def test_kubernetes_validate_is_strict(tmp_path: Path) -> None:
    """A negative control: the same validator rejects an unknown field, so the pass above means something."""
    tool = kubernetes_validate()
    docs = rendered(Variant("base"))
    bad = _bot(docs)
    bad["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesytem"] = True
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad), encoding="utf-8")
    done = subprocess.run([tool, "--strict", "--quiet", str(path)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode != 0 and "readOnlyRootFilesytem" in done.stdout, done.stdout


def test_prometheus_operator_kinds_match_their_schema(variant: Variant) -> None:
    docs = rendered(variant)
    for doc in docs:
        if doc["kind"] in CRD_KINDS:
            jsonschema.validate(doc, crd_schemas.SCHEMAS[doc["kind"]])
    present = {d["kind"] for d in docs} & CRD_KINDS
    assert present == (set() if variant.uses("without-prometheus-operator") else CRD_KINDS)


def test_own_crd_schemas_reject_a_typo() -> None:
    docs = rendered(Variant("base"))
    monitor = one(docs, "ServiceMonitor", "triagebot")
    monitor["spec"]["endpoints"][0]["intervall"] = "30s"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(monitor, crd_schemas.SERVICE_MONITOR)


# --- RBAC ---------------------------------------------------------------------------------------------

def _rules(docs: list[Doc]) -> Iterator[tuple[str, Doc]]:
    for doc in docs:
        if doc["kind"] in ("ClusterRole", "Role"):
            for rule in doc.get("rules") or []:
                yield doc["metadata"]["name"], rule


def test_rbac_is_read_only_without_secrets(variant: Variant) -> None:
    docs = rendered(variant)
    for doc in docs:
        if doc["kind"] in ("ClusterRole", "Role"):
            assert "aggregationRule" not in doc, f"{doc['metadata']['name']}: aggregated roles hide their rules"
    for name, rule in _rules(docs):
        verbs = set(rule.get("verbs") or [])
        assert verbs <= READ_VERBS, f"{name}: write or wildcard verbs {verbs - READ_VERBS}"
        resources = set(rule.get("resources") or [])
        groups = set(rule.get("apiGroups") or [])
        assert "*" not in resources and "*" not in groups, f"{name}: wildcard in {rule}"
        assert not rule.get("nonResourceURLs"), f"{name}: nonResourceURLs {rule['nonResourceURLs']}"
        assert not rule.get("resourceNames"), f"{name}: resourceNames"
        secretish = {r for r in resources if r == "secrets" or r.startswith("secrets/")}
        assert not secretish, f"{name}: grants {secretish}"
        assert "configmaps" not in resources, f"{name}: grants configmaps (they often hold credentials)"
        allowed_dangerous = {"nodes/proxy"} if variant.uses("kubelet-logs") else set()
        assert not (resources & DANGEROUS_RESOURCES) - allowed_dangerous, f"{name}: grants {resources}"


def test_nodes_proxy_only_in_the_kubelet_logs_component(variant: Variant) -> None:
    docs = rendered(variant)
    granted = [(name, rule) for name, rule in _rules(docs) if "nodes/proxy" in (rule.get("resources") or [])]
    if not variant.uses("kubelet-logs"):
        assert not granted, f"{variant.name} grants nodes/proxy: {granted}"
        return
    assert [name for name, _ in granted] == ["triagebot-kubelet-logs"]
    assert granted[0][1]["verbs"] == ["get"] and granted[0][1]["resources"] == ["nodes/proxy"]


def test_nodes_proxy_is_granted_by_no_other_source_file() -> None:
    """Not even in a patch: only components/kubelet-logs may carry a rule naming nodes/proxy."""
    for path in (DEPLOY / "kustomize").rglob("*.yaml"):
        for doc in load_yaml_all(path):
            if "nodes/proxy" in yaml.safe_dump(doc):
                assert path.parent == COMPONENTS / "kubelet-logs", f"{path} grants nodes/proxy"


def test_bindings_give_only_triagebot_roles_to_the_bot(variant: Variant) -> None:
    docs = rendered(variant)
    roles = {d["metadata"]["name"] for d in of_kind(docs, "ClusterRole")}
    for binding in of_kind(docs, "ClusterRoleBinding") + of_kind(docs, "RoleBinding"):
        ref = binding["roleRef"]
        assert ref["kind"] == "ClusterRole" and ref["name"] in roles, f"binds a role not shipped here: {ref}"
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "triagebot",
                                        "namespace": BOT_NAMESPACE}], binding["subjects"]


_API_GROUPS = {"core": "", "apps": "apps", "batch": "batch", "autoscaling": "autoscaling",
               "networking": "networking.k8s.io", "discovery": "discovery.k8s.io", "events": "events.k8s.io"}
_API_OBJECTS = {*_API_GROUPS, "custom"}


def _api_methods(source: str) -> Iterator[tuple[str, str]]:
    """(api, method) for every `<...>.core.read_node`-shaped attribute: a typed client's method."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) \
                else None
            if name in _API_OBJECTS:
                yield name, node.attr
_VERBS = {"list": "list", "read": "get", "get": "get", "watch": "watch"}


def _resource(snake: str) -> str:
    if snake == "pod_log":
        return "pods/log"
    flat = snake.replace("_", "")
    if flat.endswith("y"):
        return flat[:-1] + "ies"
    return flat if flat.endswith("s") else flat + "s"


def _kinds_read(sources: list[Path]) -> set[tuple[str, str]]:
    """(group, plural) of every Kind(...) the live collectors define: the objects they get and list."""
    found: set[tuple[str, str]] = set()
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Kind"
                    and len(node.args) >= 4 and all(isinstance(a, ast.Constant) for a in node.args[:4])):
                group, plural = node.args[1], node.args[3]
                assert isinstance(group, ast.Constant) and isinstance(plural, ast.Constant)
                found.add((str(group.value), str(plural.value)))
    return found


def _calls_made(sources: list[Path]) -> set[tuple[str, str, str]]:
    """(group, resource, verb) of every typed Kubernetes API method the live collectors call."""
    calls: set[tuple[str, str, str]] = set()
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for api, method in _api_methods(text):
            if api == "custom" or method.startswith("_"):
                continue
            verb, _, rest = method.partition("_")
            assert verb in _VERBS, f"{path.name}: {api}.{method} is not a read (the bot never writes)"
            rest = rest.replace("namespaced_", "").replace("_for_all_namespaces", "")
            calls.add((_API_GROUPS[api], _resource(rest), _VERBS[verb]))
        if "/proxy/logs/" in text:
            calls.add(("", "nodes/proxy", "get"))
    return calls


def _allows(rules: list[Doc], group: str, resource: str, verb: str) -> bool:
    return any(group in (r.get("apiGroups") or []) and resource in (r.get("resources") or [])
               and verb in (r.get("verbs") or []) for r in rules)


def test_rbac_covers_every_read_the_collectors_make() -> None:
    sources = sorted((REPO / "collectors" / "live").glob("*.py"))
    calls = _calls_made(sources)
    kinds = _kinds_read(sources)
    assert ("", "pods", "list") in calls and ("", "pods/log", "get") in calls, "the scan found nothing"
    assert ("jobset.x-k8s.io", "jobsets") in kinds, "the Kind scan found nothing"
    base = [r for _, r in _rules(rendered(Variant("base")))]
    with_logs = base + [r for _, r in _rules(rendered(Variant("overlay-kubelet-logs", "kubelet-logs",
                                                                ("socket-mode", "kubelet-logs"))))]
    for group, resource, verb in sorted(calls):
        rules = with_logs if resource == "nodes/proxy" else base
        assert _allows(rules, group, resource, verb), f"RBAC lacks {verb} on {group or 'core'}/{resource}"
    for group, plural in sorted(kinds):
        for verb in ("get", "list"):
            assert _allows(base, group, plural, verb), f"RBAC lacks {verb} on {group or 'core'}/{plural}"


def test_rbac_grants_nothing_the_collectors_do_not_read() -> None:
    sources = sorted((REPO / "collectors" / "live").glob("*.py"))
    used = {(g, r) for g, r, _ in _calls_made(sources)} | _kinds_read(sources)
    # Listed by the deploy issue for service triage (a Service's endpoints), read-only.
    used |= {("", "endpoints"), ("discovery.k8s.io", "endpointslices")}
    for name, rule in _rules(rendered(Variant("base"))):
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                assert (group, resource) in used, f"{name} grants {group or 'core'}/{resource}, which nothing reads"


# --- pods: security contexts, resources, probes ---------------------------------------------------------

def _seccomp(spec: Doc, container: Doc) -> str | None:
    profile = (container.get("securityContext") or {}).get("seccompProfile") \
        or (spec.get("securityContext") or {}).get("seccompProfile") or {}
    kind: str | None = profile.get("type")
    return kind


def test_every_container_is_locked_down(variant: Variant) -> None:
    """drop ALL, RuntimeDefault seccomp, read-only root fs everywhere; non-root everywhere but the agent."""
    for workload, spec in pod_specs(rendered(variant)):
        is_agent = workload["metadata"]["namespace"] == AGENT_NAMESPACE
        pod_ctx = spec.get("securityContext") or {}
        if not is_agent:
            assert pod_ctx.get("runAsNonRoot") is True and pod_ctx.get("runAsUser", 0) != 0, workload["metadata"]
            assert not spec.get("hostNetwork") and not spec.get("hostPID") and not spec.get("hostIPC")
            assert not [v for v in spec.get("volumes") or [] if "hostPath" in v], workload["metadata"]
        for container in _containers(spec):
            ctx = container.get("securityContext") or {}
            where = f"{workload['kind']}/{workload['metadata']['name']}/{container['name']}"
            assert ctx.get("readOnlyRootFilesystem") is True, where
            assert "ALL" in (ctx.get("capabilities") or {}).get("drop", []), where
            assert not (ctx.get("capabilities") or {}).get("add"), f"{where} adds capabilities"
            assert _seccomp(spec, container) == "RuntimeDefault", where
            privileged = bool(ctx.get("privileged"))
            if is_agent and variant.uses("node-agent-kernel-log"):
                assert privileged, f"{where}: node-agent-kernel-log should make the agent privileged"
            else:
                assert not privileged, f"{where} is privileged"
                assert ctx.get("allowPrivilegeEscalation") is False, where


def test_the_bot_runs_as_the_image_user_with_writable_state_only_on_emptydirs(variant: Variant) -> None:
    docs = rendered(variant)
    spec = _bot(docs)["spec"]["template"]["spec"]
    assert spec["securityContext"]["runAsUser"] == 10001 and spec["securityContext"]["runAsGroup"] == 10001
    volumes = {v["name"]: v for v in spec["volumes"]}
    container = _bot_container(docs)
    writable = {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")}
    assert writable == {"/var/lib/triagebot", "/tmp"}
    for mount in container["volumeMounts"]:
        if not mount.get("readOnly"):
            assert "emptyDir" in volumes[mount["name"]], mount
    assert env_of(container)["TRIAGEBOT_STATE_DIR"]["value"] == "/var/lib/triagebot"


def test_no_service_links(variant: Variant) -> None:
    """Service env vars (TRIAGEBOT_AGENT_PORT=tcp://...) would collide with TRIAGEBOT_* settings."""
    for workload, spec in pod_specs(rendered(variant)):
        assert spec.get("enableServiceLinks") is False, workload["metadata"]["name"]


def test_every_container_has_requests_and_limits(variant: Variant) -> None:
    for workload, spec in pod_specs(rendered(variant)):
        for container in _containers(spec):
            res = container.get("resources") or {}
            where = f"{workload['metadata']['name']}/{container['name']}"
            assert {"cpu", "memory"} <= set(res.get("requests") or {}), f"{where}: requests"
            assert {"cpu", "memory"} <= set(res.get("limits") or {}), f"{where}: limits"


def test_every_container_has_health_probes(variant: Variant) -> None:
    for workload, spec in pod_specs(rendered(variant)):
        for container in spec["containers"]:
            assert container.get("livenessProbe") and container.get("readinessProbe"), workload["metadata"]["name"]


def test_bot_probes_hit_healthz_and_readyz(variant: Variant) -> None:
    container = _bot_container(rendered(variant))
    port_names = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert port_names == {"http": 8080}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["args"][:1] == ["serve"] and "--port" in container["args"]
    assert container["args"][container["args"].index("--port") + 1] == "8080"


def test_one_image_for_bot_and_agent(variant: Variant) -> None:
    docs = rendered(variant)
    images = {c["image"] for w, spec in pod_specs(docs) if w["metadata"]["name"].startswith("triagebot")
              and w["kind"] != "StatefulSet" for c in spec["containers"]}
    assert len(images) == 1, images
    if variant.overlay:
        assert images == {"registry.example.com/triagebot:0.1.0"}
    for agent in _agents(docs):
        assert agent["spec"]["template"]["spec"]["containers"][0]["args"] == ["agent"]


def test_pdb_covers_the_bot(variant: Variant) -> None:
    docs = rendered(variant)
    pdb = one(docs, "PodDisruptionBudget", "triagebot")
    assert pdb["spec"]["selector"]["matchLabels"] == _bot(docs)["spec"]["selector"]["matchLabels"]
    assert pdb["spec"].get("maxUnavailable") == 1


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def test_selectors_find_their_pods(variant: Variant) -> None:
    docs = rendered(variant)
    pods = [(w["metadata"]["namespace"], w["spec"]["template"]["metadata"]["labels"]) for w, _ in pod_specs(docs)]
    for service in of_kind(docs, "Service"):
        ns, selector = service["metadata"]["namespace"], service["spec"]["selector"]
        assert any(n == ns and _matches(selector, labels) for n, labels in pods), service["metadata"]["name"]
    for policy in of_kind(docs, "NetworkPolicy"):
        ns, selector = policy["metadata"]["namespace"], policy["spec"]["podSelector"]["matchLabels"]
        assert any(n == ns and _matches(selector, labels) for n, labels in pods), policy["metadata"]["name"]
    for monitor in of_kind(docs, "ServiceMonitor"):
        services = [s for s in of_kind(docs, "Service") if _matches(monitor["spec"]["selector"]["matchLabels"],
                                                                     s["metadata"].get("labels") or {})]
        assert [s["metadata"]["name"] for s in services] == ["triagebot"]
        ports = {p["name"] for p in services[0]["spec"]["ports"]}
        assert {e["port"] for e in monitor["spec"]["endpoints"]} <= ports
        assert [e["path"] for e in monitor["spec"]["endpoints"]] == ["/metrics"]


# --- Slack modes, databases, ingress -----------------------------------------------------------------

def test_slack_mode_matches_the_component(variant: Variant) -> None:
    docs = rendered(variant)
    env = env_of(_bot_container(docs))
    ingresses = of_kind(docs, "Ingress")
    if variant.uses("http-ingress"):
        assert env["TRIAGEBOT_SLACK_MODE"]["value"] == "http"
        assert "SLACK_SIGNING_SECRET" in env and "SLACK_APP_TOKEN" not in env
        assert len(ingresses) == 1
        paths = [p for rule in ingresses[0]["spec"]["rules"] for p in rule["http"]["paths"]]
        assert [(p["path"], p["pathType"]) for p in paths] == [("/slack/events", "Exact")], "only Slack is public"
        assert paths[0]["backend"]["service"] == {"name": "triagebot", "port": {"name": "http"}}
    elif variant.uses("socket-mode"):
        assert env["TRIAGEBOT_SLACK_MODE"]["value"] == "socket"
        assert "SLACK_APP_TOKEN" in env and "SLACK_SIGNING_SECRET" not in env
        assert not ingresses
    else:
        assert variant.name == "base" and "TRIAGEBOT_SLACK_MODE" not in env and not ingresses


def test_database_choice(variant: Variant) -> None:
    docs = rendered(variant)
    bot = _bot(docs)
    env = env_of(_bot_container(docs))
    statefulsets = of_kind(docs, "StatefulSet")
    if variant.uses("postgres-incluster"):
        assert bot["spec"]["replicas"] == 2
        assert env["TRIAGEBOT_DATABASE_URL"]["value"].startswith("postgresql+psycopg://triagebot@triagebot-postgres.")
        assert ":" not in env["TRIAGEBOT_DATABASE_URL"]["value"].split("@")[0].split("//")[1], "no password in URL"
        assert env["PGPASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "triagebot-postgres", "key": "password"}
        sts = one(docs, "StatefulSet", "triagebot-postgres")
        pg_env = env_of(sts["spec"]["template"]["spec"]["containers"][0])
        assert pg_env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"] == env["PGPASSWORD"]["valueFrom"][
            "secretKeyRef"]
        policy = one(docs, "NetworkPolicy", "triagebot-postgres")
        assert policy["spec"]["ingress"][0]["ports"] == [{"protocol": "TCP", "port": 5432}]
    elif variant.uses("postgres-external"):
        assert bot["spec"]["replicas"] == 2 and not statefulsets
        assert env["TRIAGEBOT_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {"name": "triagebot-database",
                                                                               "key": "url"}
    else:
        assert bot["spec"]["replicas"] == 1 and not statefulsets and "TRIAGEBOT_DATABASE_URL" not in env


def test_namespaces_and_pod_security(variant: Variant) -> None:
    docs = rendered(variant)
    spaces = {d["metadata"]["name"]: d["metadata"].get("labels") or {} for d in of_kind(docs, "Namespace")}
    assert spaces[BOT_NAMESPACE]["pod-security.kubernetes.io/enforce"] == "restricted"
    if variant.uses("node-agent"):
        assert spaces[AGENT_NAMESPACE]["pod-security.kubernetes.io/enforce"] == "privileged"
    else:
        assert AGENT_NAMESPACE not in spaces and not _agents(docs)


# --- the node agent ---------------------------------------------------------------------------------

def _agent_variants() -> list[Variant]:
    return [v for v in VARIANTS if v.uses("node-agent")]


@pytest.mark.parametrize("agent_variant", _agent_variants(), ids=[v.name for v in _agent_variants()])
def test_agent_daemonsets(agent_variant: Variant) -> None:
    docs = rendered(agent_variant)
    agents = {d["metadata"]["name"]: d for d in _agents(docs)}
    assert set(agents) == {"triagebot-agent", "triagebot-agent-gpu"}
    containers = []
    for name, ds in agents.items():
        spec = ds["spec"]["template"]["spec"]
        assert spec["hostNetwork"] is True and not spec.get("hostPID") and not spec.get("hostIPC")
        assert spec["automountServiceAccountToken"] is False
        host_paths = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
        assert REQUIRED_AGENT_HOST_PATHS <= set(host_paths.values()) <= AGENT_HOST_PATHS, host_paths
        assert "/proc" not in host_paths.values()
        container = spec["containers"][0]
        for mount in container["volumeMounts"]:
            if mount["name"] in host_paths:
                assert mount.get("readOnly") is True, f"{name}: {mount['mountPath']} is writable"
                # Mounts made on the host after start (a new pod's shm tmpfs) may show; none ever flows back.
                allowed = {"None", "HostToContainer"} if host_paths[mount["name"]] == SANDBOXES else {"None"}
                assert mount.get("mountPropagation", "None") in allowed, mount
        mounted = {m["name"] for m in container["volumeMounts"]}
        assert set(host_paths) <= mounted
        port = container["ports"][0]
        assert port["containerPort"] == 9105 and port["name"] == "agent"
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "agent"}
        assert env_of(container)["TRIAGEBOT_AGENT_TOKEN"]["valueFrom"]["secretKeyRef"] == {
            "name": "triagebot-agent", "key": "token"}
        if name == "triagebot-agent-gpu":
            assert spec["runtimeClassName"] == "nvidia"
            assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
            assert env_of(container)["NVIDIA_DRIVER_CAPABILITIES"]["value"] == "utility"
        else:
            assert "runtimeClassName" not in spec
            terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            assert terms["nodeSelectorTerms"][0]["matchExpressions"] == [
                {"key": "nvidia.com/gpu.present", "operator": "NotIn", "values": ["true"]}]
        containers.append(container)
    # The two DaemonSets run the same agent: same mounts, security, resources and probes.
    cpu, gpu = containers
    for key in ("volumeMounts", "securityContext", "resources", "livenessProbe", "readinessProbe", "args"):
        assert cpu[key] == gpu[key], key
    assert {k: v for k, v in env_of(gpu).items() if not k.startswith("NVIDIA_")} == env_of(cpu)


@pytest.mark.parametrize("agent_variant", _agent_variants(), ids=[v.name for v in _agent_variants()])
def test_agent_lands_on_every_node_and_stays(agent_variant: Variant) -> None:
    """Every taint tolerated (a key-less Exists), node-critical priority (or the component's own class), and
    requests within limits: a tainted, NotReady or pressured node keeps its agent (issue 28, point 2)."""
    docs = rendered(agent_variant)
    own = agent_variant.uses("node-agent-priority")
    wanted = "triagebot-node-agent" if own else "system-node-critical"
    for ds in _agents(docs):
        spec = ds["spec"]["template"]["spec"]
        assert spec["tolerations"] == [{"operator": "Exists"}], ds["metadata"]["name"]
        assert spec["priorityClassName"] == wanted, ds["metadata"]["name"]
        resources = spec["containers"][0]["resources"]
        for kind in ("cpu", "memory"):
            assert _quantity(resources["requests"][kind]) <= _quantity(resources["limits"][kind]), kind
    # The quota that lets clusters with limited critical classes admit the pods names the class they use.
    quota = one(docs, "ResourceQuota", "triagebot-agent-critical-pods")
    assert quota["metadata"]["namespace"] == AGENT_NAMESPACE
    assert quota["spec"]["scopeSelector"]["matchExpressions"] == [
        {"scopeName": "PriorityClass", "operator": "In", "values": [wanted]}]
    classes = of_kind(docs, "PriorityClass")
    if own:
        [cls] = classes
        assert cls["metadata"]["name"] == wanted and "namespace" not in cls["metadata"]
        # The highest value a user-defined class may take; above it the API server refuses the object.
        assert cls["value"] == 1_000_000_000 and cls["globalDefault"] is False
    else:
        assert classes == []


def _quantity(value: str) -> float:
    """A Kubernetes CPU or memory quantity as a number (only the suffixes these manifests use)."""
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    for suffix, factor in units.items():
        if str(value).endswith(suffix):
            return float(str(value)[: -len(suffix)]) * factor
    return float(value)


def test_the_priority_component_is_rendered_with_the_agent() -> None:
    assert any(v.uses("node-agent-priority") for v in _agent_variants())
    assert any(not v.uses("node-agent-priority") for v in _agent_variants())


@pytest.mark.parametrize("agent_variant", _agent_variants(), ids=[v.name for v in _agent_variants()])
def test_agent_network_policy_admits_only_the_bot(agent_variant: Variant) -> None:
    docs = rendered(agent_variant)
    policy = one(docs, "NetworkPolicy", "triagebot-agent")
    assert policy["metadata"]["namespace"] == AGENT_NAMESPACE
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    [rule] = policy["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 9105}]
    [peer] = rule["from"]
    bot_ns = one(docs, "Namespace", BOT_NAMESPACE)
    assert _matches(peer["namespaceSelector"]["matchLabels"], {
        **bot_ns["metadata"].get("labels", {}), "kubernetes.io/metadata.name": BOT_NAMESPACE})
    assert _matches(peer["podSelector"]["matchLabels"], _bot(docs)["spec"]["template"]["metadata"]["labels"])
    service = one(docs, "Service", "triagebot-agent")
    assert service["spec"]["clusterIP"] == "None"
    assert env_of(_bot_container(docs))["TRIAGEBOT_AGENT_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == \
        "triagebot-agent"


# --- secrets ------------------------------------------------------------------------------------------

_TOKENISH = re.compile(r"xox[abprs]-[0-9A-Za-z-]{6,}|xapp-\d-[0-9A-Za-z-]{6,}|-----BEGIN [A-Z ]*PRIVATE KEY")


def _secret_refs(docs: list[Doc]) -> set[tuple[str, str, str]]:
    refs: set[tuple[str, str, str]] = set()
    for workload, spec in pod_specs(docs):
        ns = workload["metadata"]["namespace"]
        for container in _containers(spec):
            for entry in container.get("env") or []:
                ref = (entry.get("valueFrom") or {}).get("secretKeyRef")
                if ref:
                    refs.add((ns, ref["name"], ref["key"]))
            for source in container.get("envFrom") or []:
                assert "secretRef" not in source or source["secretRef"]["name"], source
    return refs


def test_no_secret_is_rendered_or_committed(variant: Variant) -> None:
    text = rendered_text(variant)
    assert not of_kind(rendered(variant), "Secret"), f"{variant.name} renders a Secret"
    assert not _TOKENISH.search(text), "a token-shaped string in the manifests"


def test_secrets_are_referenced_never_inlined(variant: Variant) -> None:
    for workload, spec in pod_specs(rendered(variant)):
        for container in _containers(spec):
            for entry in container.get("env") or []:
                if re.search(r"TOKEN|SECRET|PASSWORD|PASSWD", entry["name"]) or entry["name"] == "PGPASSWORD":
                    assert "value" not in entry, f"{workload['metadata']['name']}: {entry['name']} is inlined"
                    assert entry["valueFrom"].get("secretKeyRef"), entry


def test_secret_example_documents_every_reference_and_is_not_applied() -> None:
    example = BASE / "secret.example.yaml"
    documented = {(d["metadata"]["namespace"], d["metadata"]["name"], key) for d in load_yaml_all(example)
                  for key in d.get("stringData", {})}
    for d in load_yaml_all(example):
        assert d["kind"] == "Secret" and "data" not in d
        for key, value in d["stringData"].items():
            assert value.startswith("<") and value.endswith(">"), f"{key}: only placeholders in the example"
    refs: set[tuple[str, str, str]] = set()
    for v in VARIANTS:
        refs |= _secret_refs(rendered(v))
    # The agent namespace holds a copy of the agent token: the example documents it in its comment.
    expected = {(ns if ns == BOT_NAMESPACE else BOT_NAMESPACE, name, key) for ns, name, key in refs}
    assert expected <= documented, f"undocumented secrets: {expected - documented}"
    assert (AGENT_NAMESPACE, "triagebot-agent", "token") in refs
    assert "-n triagebot-agent create secret generic triagebot-agent" in example.read_text(encoding="utf-8")
    for kustomization in (DEPLOY / "kustomize").rglob("kustomization.yaml"):
        doc = load_yaml(kustomization)
        assert "secret.example" not in yaml.safe_dump(doc), f"{kustomization} applies the example Secret"
        assert not doc.get("secretGenerator"), f"{kustomization} generates a Secret"


def test_no_secret_manifest_anywhere_in_deploy() -> None:
    for path in DEPLOY.rglob("*"):
        if path.suffix not in (".yaml", ".yml") or path.name == "secret.example.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict):
                assert doc.get("kind") != "Secret", f"{path} holds a Secret"
        assert not _TOKENISH.search(path.read_text(encoding="utf-8")), path


# --- settings: what the containers are told is what the code reads ------------------------------------

_FAKE_SECRETS = {
    ("triagebot-slack", "bot-token"): "xoxb-0000-fake-bot-token",
    ("triagebot-slack", "signing-secret"): "f" * 32,
    ("triagebot-slack", "app-token"): "xapp-1-fake-app-token",
    ("triagebot-webhook", "token"): "w" * 32,
    ("triagebot-agent", "token"): "a" * 32,
    ("triagebot-postgres", "password"): "p" * 24,
    ("triagebot-database", "url"): "postgresql+psycopg://triagebot:pw@db.example.internal:5432/triagebot",
}
_FAKE_FIELDS = {"status.hostIP": "10.0.0.7", "spec.nodeName": "gpu-node-1", "metadata.name": "pod-0"}


def _container_env(container: Doc, config_file: Path | None = None) -> dict[str, str]:
    env: dict[str, str] = {}
    for entry in container.get("env") or []:
        if "value" in entry:
            env[entry["name"]] = entry["value"]
        elif "secretKeyRef" in entry["valueFrom"]:
            ref = entry["valueFrom"]["secretKeyRef"]
            env[entry["name"]] = _FAKE_SECRETS[(ref["name"], ref["key"])]
        else:
            env[entry["name"]] = _FAKE_FIELDS[entry["valueFrom"]["fieldRef"]["fieldPath"]]
    if config_file is not None and "TRIAGEBOT_CONFIG" in env:
        env["TRIAGEBOT_CONFIG"] = str(config_file)
    return env


def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(("TRIAGEBOT_", "SLACK_")):
            monkeypatch.delenv(name)


def _settings_env_names() -> set[str]:
    from bot.config import Settings

    names = set()
    for name, info in Settings.model_fields.items():
        alias = info.validation_alias
        choices = getattr(alias, "choices", None)
        upper = [str(c) for c in choices or [] if str(c).isupper()]
        names |= set(upper) or {f"TRIAGEBOT_{name.upper()}"}
    return names


def test_bot_env_names_are_settings_the_code_reads(variant: Variant) -> None:
    container = _bot_container(rendered(variant))
    known = _settings_env_names() | {"TRIAGEBOT_CONFIG", "TRIAGEBOT_STATE_DIR", "HOME", "MPLCONFIGDIR", "PGPASSWORD"}
    unknown = set(env_of(container)) - known
    assert not unknown, f"the bot reads no such settings: {unknown}"


@pytest.mark.parametrize("overlay", sorted(EXPECTED_OVERLAYS))
def test_each_overlay_passes_the_bots_own_startup_checks(overlay: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The env an overlay gives the bot (secrets faked) satisfies load_settings() and serve's checks."""
    from bot.config import load_settings
    from bot.serve import check_settings

    variant = next(v for v in VARIANTS if v.overlay == overlay)
    _clean_env(monkeypatch)
    for name, value in _container_env(_bot_container(rendered(variant)), BASE / "triagebot.yaml").items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    check_settings(settings)
    assert settings.slack_mode == ("http" if overlay == "http-ingress" else "socket")
    assert settings.routes and settings.default_channel and settings.permissions.channels
    assert (settings.agent_token is not None) == variant.uses("node-agent")
    assert (settings.database_url is not None) == (variant.uses("postgres-incluster")
                                                   or variant.uses("postgres-external"))


def test_config_file_loads_with_the_real_settings_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.config import load_settings

    _clean_env(monkeypatch)
    monkeypatch.setenv("TRIAGEBOT_CONFIG", str(BASE / "triagebot.yaml"))
    settings = load_settings()
    raw = load_yaml(BASE / "triagebot.yaml")
    assert settings.cluster_name == raw["cluster_name"] and len(settings.routes) == len(raw["routes"])
    assert not any(k in raw for k in ("slack_bot_token", "slack_signing_secret", "slack_app_token",
                                      "webhook_token", "agent_token", "database_url", "prometheus_token"))


@pytest.mark.parametrize("agent_variant", _agent_variants(), ids=[v.name for v in _agent_variants()])
def test_agent_env_is_accepted_and_points_inside_its_mounts(agent_variant: Variant,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from collectors.agent.config import AgentSettings

    for agent in _agents(rendered(agent_variant)):
        container = agent["spec"]["template"]["spec"]["containers"][0]
        env = _container_env(container)
        known = {f"TRIAGEBOT_AGENT_{n.upper()}" for n in AgentSettings.model_fields}
        assert {n for n in env if n.startswith("TRIAGEBOT_")} <= known
        _clean_env(monkeypatch)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        settings = AgentSettings()
        assert settings.host == "10.0.0.7" and settings.port == 9105 and settings.node_name == "gpu-node-1"
        mounts = {m["mountPath"] for m in container["volumeMounts"] if m.get("readOnly")}
        assert str(settings.kmsg_path) in mounts
        assert str(settings.cgroup_root) in mounts
        assert str(settings.pod_resources_socket.parent) in mounts
        for template in settings.container_bundle_dirs:
            assert str(Path(template).parent) in mounts, template


def test_overlays_directory_holds_only_kustomizations() -> None:
    for path in OVERLAYS.rglob("*"):
        if path.is_file():
            assert path.name == "kustomization.yaml", f"{path}: overlays only combine components"
