#!/usr/bin/env bash
# npm run check:tinker — TinkerPolicy against a real SkyRL tx Tinker server (JAX on CPU), with the
# official tinker SDK as a second witness. Sets up its own venv (.venv-tinker, pinned
# requirements.txt), writes a tiny random-weight Llama locally (no hub download), starts the server
# on 127.0.0.1, runs check.ts then sdk-witness.py, and stops the server on any exit.
#   ITERATIONS=3 PORT=8765 bash scripts/check-tinker/run.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/check-tinker"
venv="$root/.venv-tinker"
port="${PORT:-8765}"
iterations="${ITERATIONS:-3}"
python="${PYTHON:-python3.11}"

started=$(date +%s)
if [ ! -f "$venv/.installed" ] || ! cmp -s "$here/requirements.txt" "$venv/.installed"; then
  echo "== installing $venv from requirements.txt (a few minutes; torch and jax are large)"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --progress-bar off -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/.installed"
fi
installed=$(date +%s)
echo "== venv ready in $((installed - started)) s"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentrl-check-tinker-XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

node --import tsx "$here/write-model.ts" "$work/model"

# SkyRL tx's API server starts its engine as `uv run --extra tinker --extra jax -m tx.tinker.engine …`
# (it expects a source checkout run with uv); this shim runs that module with the venv's python.
mkdir -p "$work/bin"
cat > "$work/bin/uv" <<'SHIM'
#!/usr/bin/env bash
while [ "$#" -gt 0 ] && [ "$1" != "-m" ]; do shift; done
exec "$TINKER_VENV_PYTHON" "$@"
SHIM
chmod +x "$work/bin/uv"

echo "== starting SkyRL tx on 127.0.0.1:$port (log: server.log in $work)"
PATH="$work/bin:$PATH" TINKER_VENV_PYTHON="$venv/bin/python" JAX_PLATFORMS=cpu setsid "$venv/bin/python" -m tx.tinker.api \
  --base-model "$work/model" --host 127.0.0.1 --port "$port" \
  --database-url "sqlite:///$work/tinker.db" --checkpoints-base "$work/checkpoints" \
  --backend-config '{"max_lora_adapters": 4, "max_lora_rank": 8}' > "$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/api/v1/healthz" > /dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "server exited:"; tail -40 "$work/server.log"; exit 1; }
  sleep 1
done
curl -sf "http://127.0.0.1:$port/api/v1/healthz" > /dev/null || { echo "server not healthy after 120 s"; tail -40 "$work/server.log"; exit 1; }

status=0
echo "== witness 1: agentrl TinkerPolicy ($iterations GRPO iterations)"
node --import tsx "$here/check.ts" --base-url "http://127.0.0.1:$port" --base-model "$work/model" --out "$work/witness.json" --iterations "$iterations" || status=1
if [ -f "$work/witness.json" ]; then
  echo "== witness 2: the official tinker SDK, same requests"
  "$venv/bin/python" "$here/sdk-witness.py" "$work/witness.json" || status=1
else
  status=1
fi
[ "$status" -eq 0 ] || { echo "== server log (last 40 lines)"; tail -40 "$work/server.log"; }
echo "== check:tinker $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - installed )) s after the install"
exit "$status"
