# Sourced by the check scripts.
# One pinned venv per Python peer, made from the project's files:
#   ensure_venv VENV REQUIREMENTS [pip install options …]
# (Re)creates VENV with $PYTHON (default python3.11, else python3) and installs REQUIREMENTS into it
# when VENV has not been made from exactly that file yet (its copy is kept as VENV/.installed).
ensure_venv() {
  local venv="$1" requirements="$2"
  shift 2
  if [ -f "$venv/.installed" ] && cmp -s "$requirements" "$venv/.installed"; then return 0; fi
  local python="${PYTHON:-python3.11}"
  command -v "$python" > /dev/null || python=python3
  echo "== installing $venv from $requirements"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --progress-bar off --disable-pip-version-check "$@" -r "$requirements"
  cp "$requirements" "$venv/.installed"
}

# Stops the server a check started as a process-group leader (setsid): SIGTERM to the group, up to
# 10 s to exit, then SIGKILL. Nothing to do when PID is empty or already gone.
#   stop_process_group PID
stop_process_group() {
  local pid="$1"
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then return 0; fi
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL -- "-$pid" 2>/dev/null || true
}
