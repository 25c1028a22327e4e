#!/usr/bin/env bash
# npm run check:python — the heavy Python side (not in CI: torch alone is a few GB to install):
#   check_models.py    exported folders in AutoModelForCausalLM: logits vs agentrl's forward ≤ 1e-4 up to
#                      512 tokens (diffs printed); generate() never samples ids past the vocabulary
#   check_datasets.py  `agentrl export` Parquet/JSONL in datasets, read by TRL's data utilities
#   train_grpo.py      TRL GRPOTrainer on `agentrl serve-env bandit` through openenv-core's GenericEnvClient
# Sets up .venv-python from requirements.txt (exact pins) on first use; writes models with agentrl
# into a temp dir (no hub download); stops the env server on any exit.   STEPS=4 PORT=8766 npm run check:python
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/scripts/interop/python"
venv="$root/.venv-python"
port="${PORT:-8766}"
steps="${STEPS:-4}"
source "$root/scripts/interop/lib.sh"

started=$(date +%s)
ensure_venv "$venv" "$here/requirements.txt"
installed=$(date +%s)
echo "== venv ready in $((installed - started)) s"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentrl-check-python-XXXXXX")"
server_pid=""
cleanup() {
  stop_process_group "$server_pid"
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

cd "$root"
export TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1 HF_DATASETS_CACHE="$work/datasets-cache" TRL_EXPERIMENTAL_SILENCE=1 TOKENIZERS_PARALLELISM=false
node --import tsx "$here/write-fixtures.ts" "$work"
status=0
echo "== models: logits and generate"
"$venv/bin/python" "$here/check_models.py" "$work" || status=1
echo "== datasets: agentrl export in datasets and TRL"
"$venv/bin/python" "$here/check_datasets.py" "$work" || status=1

echo "== TRL GRPOTrainer on agentrl serve-env bandit (127.0.0.1:$port, log: $work/serve-env.log)"
setsid node bin/agentrl.js serve-env bandit --port "$port" > "$work/serve-env.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 60); do
  curl -sf "http://127.0.0.1:$port/health" > /dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "serve-env exited:"; cat "$work/serve-env.log"; exit 1; }
  sleep 0.5
done
"$venv/bin/python" "$here/train_grpo.py" --env-url "http://127.0.0.1:$port" --model "$work/llama" --out "$work/grpo" --steps "$steps" || status=1

echo "== check:python $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - installed )) s after the install"
exit "$status"
