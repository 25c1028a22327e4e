#!/usr/bin/env bash
# npm run check:trackers — agentrl's trackers against the real tools: starts `mlflow server` (from
# PyPI, .venv-mlflow, exact pins in scripts/interop/mlflow/requirements.txt) on 127.0.0.1 with a
# SQLite backend in a temp dir; logs a synthetic run (resumed halfway) and a tiny `agentrl train
# --tracker mlflow` run to it over the REST API, and the same synthetic run and an `agentrl train
# --tracker tensorboard` run as event files; then reads everything back with MLflow's own
# MlflowClient and tensorboard's EventAccumulator (.venv-tensorboard). Stops the server on any exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
interop="$root/scripts/interop"
source "$root/scripts/interop/lib.sh"

started=$(date +%s)
for tool in mlflow tensorboard; do
  ensure_venv "$root/.venv-$tool" "$interop/$tool/requirements.txt"
done
installed=$(date +%s)
echo "== venvs ready in $((installed - started)) s"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentrl-check-trackers-XXXXXX")"
server_pid=""
cleanup() {
  stop_process_group "$server_pid"
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

port="${PORT:-$("$root/.venv-mlflow/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
uri="http://127.0.0.1:$port"
echo "== starting mlflow server on $uri (log: $work/mlflow.log)"
setsid "$root/.venv-mlflow/bin/mlflow" server --host 127.0.0.1 --port "$port" --workers 1 \
  --backend-store-uri "sqlite:///$work/mlflow.db" --default-artifact-root "$work/artifacts" > "$work/mlflow.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  if curl -sf "$uri/health" > /dev/null; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/mlflow.log"; echo "== mlflow server exited"; exit 1; fi
  sleep 0.5
done
curl -sf "$uri/health" > /dev/null || { tail -20 "$work/mlflow.log"; echo "== mlflow server did not answer in 60 s"; exit 1; }
echo "== mlflow server up in $(( $(date +%s) - installed )) s"

cd "$root"
node --import tsx "$interop/trackers/log-runs.ts" --mlflow "$uri" --tensorboard "$work/tensorboard" --out "$work"

# A tiny real training run per tracker (seconds each): the CLI flags, the recorder's metrics, the end status.
tiny=(--env bandit --algo grpo --seed 1 --demonstrations 16 --sft-steps 12 --hidden-size 32 --num-layers 1 --num-heads 2 --num-kv-heads 1
  --intermediate-size 64 --max-seq-len 64 --iterations 2 --tasks-per-iteration 2 --group-size 4 --max-turns 1 --max-new-tokens 24
  --test-episodes 4 --validate-every 0 --validation-episodes 4 --checkpoint-every 0)
node bin/agentrl.js train "${tiny[@]}" --store "$work/runs.db" --out "$work/checkpoints-1" --run-name tracked-mlflow \
  --tracker mlflow --tracker-uri "$uri" > "$work/train-mlflow.log" 2>&1 || { cat "$work/train-mlflow.log"; exit 1; }
node bin/agentrl.js train "${tiny[@]}" --store "$work/runs.db" --out "$work/checkpoints-2" --run-name tracked-tensorboard \
  --tracker tensorboard --tracker-dir "$work/tensorboard-train" > "$work/train-tensorboard.log" 2>&1 || { cat "$work/train-tensorboard.log"; exit 1; }

status=0
"$root/.venv-mlflow/bin/python" "$interop/mlflow/read_back.py" "$uri" "$work/expected.json" tracked-mlflow || status=1
"$root/.venv-tensorboard/bin/python" "$interop/tensorboard/read_back.py" "$work/expected.json" "$work/tensorboard-train/tracked-tensorboard" || status=1
echo "== check:trackers $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - installed )) s after the install"
exit "$status"
