#!/usr/bin/env bash
# npm run check:tinker — TinkerPolicy against a real SkyRL tx Tinker server (JAX on CPU), with the
# official tinker SDK as a second witness. Sets up its own venv, writes a tiny random-weight Llama
# locally (no hub download), starts the server on 127.0.0.1, and stops it on any exit. Runs:
#   1. check.ts        — a few GRPO iterations through TinkerPolicy (loss finite, LoRA moves, sampled = forward log-probs);
#   2. sdk-witness.py  — the tinker SDK sends the same requests and gets the same numbers;
#   3. contract-check.ts — policyContract({ trainable: true }) for TinkerPolicy;
#   4. `agentrl train --backend tinker …` (runRl), then train-check.ts reads the run store and prints the time split.
#   ITERATIONS=2 PORT=8765 bash scripts/check-tinker/run.sh
# The venv is the slim one (.venv-tinker-slim: requirements-slim.txt installed with --no-deps, no torch/CUDA,
# peft-shim/ in place of peft; ~2 min, 1.4 GB); VENV=full uses .venv-tinker (requirements.txt, ~7 min, 6.6 GB).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/scripts/interop/lib.sh"
here="$root/scripts/check-tinker"
port="${PORT:-8765}"
iterations="${ITERATIONS:-2}"
python="${PYTHON:-python3.11}"

started=$(date +%s)
if [ "${VENV:-slim}" = full ]; then
  venv="$root/.venv-tinker"
  stamp="$(cat "$here/requirements.txt")"
else
  venv="$root/.venv-tinker-slim"
  stamp="$(cat "$here/requirements-slim.txt" "$here/peft-shim/peft/__init__.py")"
fi
if [ ! -f "$venv/.installed" ] || [ "$(cat "$venv/.installed")" != "$stamp" ]; then
  echo "== installing $venv (a few minutes; jax is large)"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  if [ "${VENV:-slim}" = full ]; then
    "$venv/bin/pip" install --quiet --progress-bar off -r "$here/requirements.txt"
  else
    "$venv/bin/pip" install --quiet --progress-bar off --no-deps -r "$here/requirements-slim.txt"
    cp -r "$here/peft-shim/peft" "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/"
  fi
  printf '%s' "$stamp" > "$venv/.installed"
fi
installed=$(date +%s)
echo "== venv $venv ready in $((installed - started)) s"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentrl-check-tinker-XXXXXX")"
server_pid=""
cleanup() {
  stop_process_group "$server_pid"
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
  --backend-config '{"max_lora_adapters": 8, "max_lora_rank": 8, "sample_max_num_sequences": 8}' > "$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/api/v1/healthz" > /dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "server exited:"; tail -40 "$work/server.log"; exit 1; }
  sleep 1
done
curl -sf "http://127.0.0.1:$port/api/v1/healthz" > /dev/null || { echo "server not healthy after 120 s"; tail -40 "$work/server.log"; exit 1; }

status=0
base_url="http://127.0.0.1:$port"
step() { local label="$1"; shift; local t0; t0=$(date +%s); echo "== $label"; "$@" || status=1; echo "   ($(( $(date +%s) - t0 )) s)"; }
step "witness 1: agentrl TinkerPolicy ($iterations GRPO iterations)" \
  node --import tsx "$here/check.ts" --base-url "$base_url" --base-model "$work/model" --out "$work/witness.json" --iterations "$iterations"
if [ -f "$work/witness.json" ]; then
  step "witness 2: the official tinker SDK, same requests" "$venv/bin/python" "$here/sdk-witness.py" "$work/witness.json"
else
  status=1
fi
step "policyContract({ trainable: true }) for TinkerPolicy" \
  env TINKER_BASE_URL="$base_url" TINKER_BASE_MODEL="$work/model" node --import tsx --test --test-reporter=spec "$here/contract-check.ts"
step "agentrl train --backend tinker (runRl, recorded in the run store)" \
  node "$root/bin/agentrl.js" train --env bandit --backend tinker --base-url "$base_url" --base-model "$work/model" --lora-rank 8 \
    --tinker-loss-reduction sequence-mean --store "$work/runs.db" --out "$work/run" --run-name tinker-e2e --demonstrations 8 --sft-steps 2 \
    --sft-batch-size 4 --iterations 2 --tasks-per-iteration 2 --group-size 4 --max-turns 1 --max-new-tokens 12 --test-episodes 2 \
    --validation-episodes 2 --validate-every 0 --checkpoint-every 1 --learning-rate 0.01
step "the run in the store; time split" node --import tsx "$here/train-check.ts" --store "$work/runs.db" --run-name tinker-e2e --iterations 2
[ "$status" -eq 0 ] || { echo "== server log (last 40 lines)"; tail -40 "$work/server.log"; }
echo "== check:tinker $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - installed )) s after the install"
exit "$status"
