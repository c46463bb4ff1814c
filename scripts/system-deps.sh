#!/usr/bin/env bash
# Install the Debian packages the tests start for real (Prometheus, Alertmanager, PostgreSQL, kubectl) and the
# C++ compiler llama-cpp-python builds with, when any is missing. Needs root or sudo; without them it says what to install and carries on.
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
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${need[@]}"
