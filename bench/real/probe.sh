#!/usr/bin/env bash
# Task-design probe for npm run bench:real: SmolLM2-135M-Instruct's base success on calculator task
# variants (bench/real/variants.ts), sampled in PyTorch (probe_generate.py) and scored by the real env.
# Uses check:real's pinned venv (.venv-real from scripts/interop/real/requirements.txt: torch CPU,
# transformers, gguf) and the model pulled by `agentrl models pull smollm2-135m-instruct`.
#   bash bench/real/probe.sh [variant-name-prefix …]     (PROBE_EPISODES=48, PROBE_SHOW=n replies)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/.venv-real"
source "$root/scripts/interop/lib.sh"
ensure_venv "$venv" "$root/scripts/interop/real/requirements.txt"
cd "$root"
ls "${AGENTRL_CACHE:-$HOME/.cache/agentrl}/models/smollm2-135m-instruct/"*.gguf > /dev/null 2>&1 || node bin/agentrl.js models pull smollm2-135m-instruct
export TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1 TQDM_DISABLE=1
exec node --import tsx bench/real/probe.ts "$venv/bin/python" "$@"
