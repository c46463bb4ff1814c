# Sourced by scripts/*.sh: say what a long step does and roughly how long it takes, and keep saying it.
# `step "what" "how long" cmd...` prints the step, runs cmd, and prints a line every 60 s while it runs, so a
# quiet compile or download is never mistaken for a hang.
step() {
  local what="$1" how_long="$2"
  shift 2
  echo "== ${what} (${how_long}) =="
  local started=$SECONDS
  "$@" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq "${PROGRESS_INTERVAL:-60}"); do
      sleep 1
      kill -0 "$pid" 2>/dev/null || break
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "   ... still ${what,} ($(( (SECONDS - started) / 60 )) min so far)"
    fi
  done
  wait "$pid"
}
