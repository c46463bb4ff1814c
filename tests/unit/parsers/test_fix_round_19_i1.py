"""Fix round 19 (i1), service-unreachable: kube-proxy's IPVS proxier failing to program a Service and the kernel's IPVS
finding no real server (signals.yaml); bash's /dev/tcp client and gRPC-Go's dial timeout (network.yaml); a kube-proxy
restart said to bring the Services back, IPVS "forwarding rules" said missing, pods said to have no access to
kube-dns (stated.yaml); "not able to reach", a Service named by its port and Chinese "cannot get through"
(symptom_words.yaml). Real lines from other public threads than the realworld cases (named beside each), and near
misses that must read nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts


def _symptoms(facts: dict[str, object]) -> set[object]:
    value = facts.get("evidence.symptoms", [])
    return set(value) if isinstance(value, list) else set()


# ---- kube-proxy's IPVS proxier: a netlink call for a Service's virtual server failed ------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/kubernetes/issues/89520 (description): kube-proxy 1.18 on CentOS 7's 3.10 kernel
    "E0326 13:14:23.847364       1 proxier.go:1950] Failed to list IPVS destinations, error: parseIP Error "
    "ip=[253 0 0 16 2 69 0 0 221 232 251 54 204 98 3 124]",
    "E0326 13:14:23.847388       1 proxier.go:1192] Failed to sync endpoint for service: [fd00:10:96::a]:53/UDP, "
    "err: parseIP Error ip=[253 0 0 16 2 69 0 0 221 232 251 54 204 98 3 124]",
    # https://github.com/kubernetes/kubernetes/issues/71071 (comment): the IPVS proxier hung until a restart
    "E1129 21:09:11.422699       1 proxier.go:1116] Failed to sync endpoint for service: 172.17.0.1:31800/TCP, err: "
    "Expected only one service obtained=0",
])
def test_an_ipvs_proxier_failure_is_a_failed_sync(line: str) -> None:
    assert joined_facts(line + "\n").get("proxy.sync_failed") is True


@pytest.mark.parametrize("line", [
    # https://github.com/easzlab/kubeasz/issues/1003 (description): graceful termination at work, no failure
    "Apr 15 15:08:14 paas-5 kube-proxy[1629]: I0415 15:08:14.242642    1629 graceful_termination.go:93] lw: remote "
    "out of the list: 10.68.228.57:9999/TCP/172.20.0.165:9999",
    # another program's IPVS listing in its own words (a load balancer's controller), not kube-proxy's
    "failed to list ipvs destinations, err=netlink receive: no such file or directory",
])
def test_other_ipvs_lines_are_no_failed_sync(line: str) -> None:
    assert "proxy.sync_failed" not in joined_facts(line + "\n")


# ---- the kernel's IPVS: no real server for a virtual service ------------------------------------------------------
def test_no_destination_available_names_the_virtual_service_and_the_symptom() -> None:
    # https://github.com/cloudnativelabs/kube-router/issues/272 (description)
    facts = joined_facts("[ 2926.286380] IPVS: rr: TCP 10.0.62.39:32739 - no destination available\n"
                         "[ 2926.935152] IPVS: rr: TCP 10.0.62.39:30023 - no destination available\n")
    assert facts.get("proxy.ipvs_no_destination") == ["TCP 10.0.62.39:32739", "TCP 10.0.62.39:30023"]
    assert "service-unreachable" in _symptoms(facts)
    assert "proxy.sync_failed" not in facts  # which of the two causes is for the endpoints beside it to say


@pytest.mark.parametrize("line", [
    # the IPVS module's own start-up lines (net/netfilter/ipvs/ip_vs_core.c, ip_vs_conn.c)
    "[    5.123456] IPVS: Creating netns size=2048 id=1",
    "[    5.123789] IPVS: ipvs loaded.",
])
def test_ipvs_start_up_lines_are_nothing(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert "proxy.ipvs_no_destination" not in facts
    assert "service-unreachable" not in _symptoms(facts)


# ---- bash's /dev/tcp -----------------------------------------------------------------------------------------------
def test_bash_dev_tcp_refused_gives_the_kind_and_target() -> None:
    # https://qastack.fr/unix/153834/test-if-telnet-port-is-active-within-a-shell-script
    facts = joined_facts("bash: connect: Connection refused\nbash: /dev/tcp/skinner/223: Connection refused\n")
    assert facts.get("client.errors") == ["refused"]
    assert facts.get("client.targets") == ["skinner:223"]


def test_bash_dev_tcp_refused_on_the_loopback_is_the_pods_own_port() -> None:
    # https://tylersguides.com/guides/check-if-a-tcp-port-is-listening-in-bash
    facts = joined_facts("bash: connect: Connection refused\nbash: /dev/tcp/localhost/24: Connection refused\n")
    assert facts.get("client.loopback_refused") == ["localhost:24"]
    assert "client.errors" not in facts


def test_bash_dev_tcp_invalid_argument_is_a_name_that_did_not_resolve() -> None:
    # https://www.gangofcoders.net/solution/test-if-remote-tcp-port-is-open-from-a-shell-script/
    facts = joined_facts("bash: sfsfdfdff.com: Name or service not known\n"
                         "bash: /dev/tcp/sfsfdfdff.com/80: Invalid argument\n")
    assert facts.get("client.errors") == ["name-resolution"]


@pytest.mark.parametrize("text", [
    # a connection that worked prints nothing of its own
    "$ exec 3<>/dev/tcp/10.96.0.1/443\n$ echo $?\n0\n",
    # an address (no letter) cannot fail to resolve: not read as a lookup
    "bash: /dev/tcp/10.96.0.1/99999: Invalid argument\n",
])
def test_bash_dev_tcp_near_misses_read_no_client_error(text: str) -> None:
    assert "client.errors" not in joined_facts(text)


# ---- gRPC-Go: the dial to the server timed out ----------------------------------------------------------------------
@pytest.mark.parametrize(("line", "target"), [
    # https://github.com/argoproj/argo-cd/issues/10023 (description)
    ('FATA[0020] rpc error: code = InvalidArgument desc = application spec for blue-green is invalid: '
     'InvalidSpecError: repository not accessible: rpc error: code = Unavailable desc = connection error: desc = '
     '"transport: Error while dialing dial tcp 172.20.86.254:8081: i/o timeout"', "172.20.86.254:8081"),
    # https://github.com/argoproj/argo-cd/issues/13644 (description, the address redacted as posted)
    ('"[{ErrorOccurred child generator returned an error on parameter generation: rpc error: code = Unavailable '
     'desc = connection error: desc = "transport: Error while dialing dial tcp 172.x.x.x:8081: i/o timeout" '
     '2023-05-18 12:40:33 +0530 IST True ApplicationGenerationFromParamsError}]"', "172.x.x.x:8081"),
])
def test_a_grpc_dial_timeout_is_a_client_timeout(line: str, target: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("client.errors") == ["timeout"]
    assert facts.get("client.targets") == [target]


@pytest.mark.parametrize("line", [
    # https://github.com/grpc-ecosystem/grpc-gateway/issues/936 (description): the loopback, refused
    'all SubConns are in TransientFailure, latest connection error: connection error: desc = \\"transport: Error '
    "while dialing dial tcp [::1]:8081: connect: connection refused",
    # the API server's etcd client: the control plane, not a Service
    'grpc: addrConn.createTransport failed to connect to {10.0.0.5:2379 <nil> 0 <nil>}. Err: connection error: desc '
    '= "transport: Error while dialing dial tcp 10.0.0.5:2379: i/o timeout". Reconnecting...',
])
def test_grpc_dials_that_are_no_service_timeout(line: str) -> None:
    assert "timeout" not in (joined_facts(line + "\n").get("client.errors") or [])


# ---- said: a kube-proxy restart that brought the Services back -----------------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/kubernetes/issues/9310 (comment)
    "I tried to restart the kube-proxy using `sudo systemctl restart proxy.service`, everything was recovered.",
    "If I manually restart kube-proxy, it all recovers and works fine until the node reboot again",
])
def test_a_kube_proxy_restart_said_to_fix_it_is_a_failed_sync(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("proxy.sync_failed") is True
    assert "service-unreachable" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/kubernetes/issues/32940 (description): another component's restart
    "Restarting the kubelet fixes the issue.",
    "Restarting kube-proxy did not fix it.",
    "Should I restart kube-proxy to fix it?",
])
def test_other_restarts_and_denials_are_not_read(line: str) -> None:
    assert "proxy.sync_failed" not in joined_facts(line + "\n")


def test_ipvs_forwarding_rules_said_missing() -> None:
    facts = joined_facts("The Ipvs forwarding rules are missing on that node.\n")
    assert facts.get("proxy.sync_failed") is True
    assert "proxy.sync_failed" not in joined_facts("The ipvs forwarding rules are all there.\n")


# ---- said: pods with no access to kube-dns --------------------------------------------------------------------------
def test_pods_said_to_have_no_access_to_kube_dns() -> None:
    facts = joined_facts("Once the egress policy is applied the pods are not allowed to reach CoreDNS.\n")
    assert facts.get("netpol.dns_egress_blocked") is True
    assert "service-unreachable" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    "The pod can't reach kube-dns.",  # as much CoreDNS down as a policy: not a permission
    "Does the pod have access to kube-dns?",
    "The pod does have access to kube-dns.",
])
def test_dns_access_near_misses(line: str) -> None:
    assert "netpol.dns_egress_blocked" not in joined_facts(line + "\n")


# ---- symptom words -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/opsnull/follow-me-install-kubernetes-cluster/issues/350 (title)
    "被service cluster ip 做负载的pod 无法连通这个 service 提供的 port",
    # https://github.com/opsnull/follow-me-install-kubernetes-cluster/issues/386 (description)
    "现在我遇到了一个问题，ClusterIP在节点上是能ping通的，但是当我使用curl 访问ClusterIP的端口是不通的。",  # noqa: RUF001
    "Tried a curl request from the gateway and it is not able to reach the api service on port 8000.",
])
def test_a_service_said_unreachable(line: str) -> None:
    assert "service-unreachable" in _symptoms(joined_facts(line + "\n"))


@pytest.mark.parametrize("line", [
    # the first clause of the #386 sentence above alone: the ClusterIP answers ping
    "现在我遇到了一个问题，ClusterIP在节点上是能ping通的",  # noqa: RUF001
    "The web service on port 8080 is able to reach the database.",
])
def test_a_service_said_reachable_is_no_symptom(line: str) -> None:
    assert "service-unreachable" not in _symptoms(joined_facts(line + "\n"))
