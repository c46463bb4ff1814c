#!/usr/bin/env bash
# Set up and run triagebot on the bundled recorded incidents: no cluster, no Slack.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/progress.sh
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
# This machine's pip configuration warns about absent local mirrors; that noise is not ours.
install() {
  .venv/bin/pip install -q --disable-pip-version-check -e . 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
}
step "Installing triagebot and its dependencies into .venv" "first run: 2-5 minutes; later runs: seconds" install
echo "== One recorded incident, as on-call would see the report =="
.venv/bin/triagebot replay drills/incidents/oom-trainer-limit
echo
echo "== Every recorded incident against its ground truth =="
.venv/bin/triagebot replay --all
echo
echo "== Ask the runbooks (no model configured: the best passages, with where to read them) =="
.venv/bin/triagebot ask -k 2 what does Xid 79 mean
echo
echo "== A fragment as people paste it: one scheduler message from a public thread (kubernetes/kubernetes#33777) =="
.venv/bin/triagebot analyze tests/realworld/pending/k8s-issue-33777-25-nodes-insufficient-cpu/evidence.txt
echo
echo "== Accuracy on real pastes from public threads, per symptom =="
.venv/bin/triagebot eval tests/realworld --quiet
