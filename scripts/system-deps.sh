#!/usr/bin/env bash
# Install the Debian packages the tests start for real (Prometheus, Alertmanager, PostgreSQL, kubectl) and the
# C++ compiler llama-cpp-python builds with, when any is missing. Needs root or sudo; without them it says what to
# install and carries on.
#
# The tests start their own Prometheus, Alertmanager and PostgreSQL on loopback ports in temp dirs; the system
# services the packages would install are not wanted. They are kept from starting during the install (a
# policy-rc.d that refuses, the Debian way) and are disabled and stopped afterwards, so nothing is left running.
set -euo pipefail
need=()
command -v python3 >/dev/null || need+=(python3 python3-venv)
python3 -c "import venv, ensurepip" 2>/dev/null || need+=(python3-venv)
command -v prometheus >/dev/null && command -v promtool >/dev/null || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null && command -v amtool >/dev/null || need+=(prometheus-alertmanager)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v kubectl >/dev/null || need+=(kubernetes-client)
command -v g++ >/dev/null || need+=(g++)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null; then as_root=(sudo); else
  echo "note: install these Debian packages for the integration tests: ${need[*]}" >&2
  exit 0
fi
SERVICES=(prometheus prometheus-alertmanager prometheus-node-exporter postgresql)
POLICY=/usr/sbin/policy-rc.d
made_policy=false
if [ ! -e "$POLICY" ]; then
  # Exit status 101 tells invoke-rc.d "action forbidden": the packages install without starting their daemons.
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$POLICY" >/dev/null
  "${as_root[@]}" chmod 755 "$POLICY"
  made_policy=true
fi
cleanup() {
  if $made_policy; then "${as_root[@]}" rm -f "$POLICY"; fi
}
trap cleanup EXIT
echo "== Installing Debian packages for the integration tests: ${need[*]} (1-3 minutes) =="
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${need[@]}"
# Whatever started anyway (a policy-rc.d that was already there, a package that bypasses invoke-rc.d) is stopped
# and disabled; a unit that does not exist is not an error.
for service in "${SERVICES[@]}"; do
  if [ -d /run/systemd/system ]; then
    "${as_root[@]}" systemctl disable --now "$service" >/dev/null 2>&1 || true
  elif [ -x "/etc/init.d/$service" ]; then
    "${as_root[@]}" "/etc/init.d/$service" stop >/dev/null 2>&1 || true
    "${as_root[@]}" update-rc.d "$service" disable >/dev/null 2>&1 || true
  fi
done
