#!/usr/bin/env bash
# npm run reference:engine — records the PyTorch + transformers (+ PEFT) reference fixtures that
# src/engine/reference-parity*.test.ts compare the engine with: log-probs, entropies, gradients
# (full and LoRA) and two AdamW steps on a tiny Llama (tied, untied), a tiny Qwen2 and SmolLM2-135M's
# shape with 2 layers, on weights both sides generate (weights.py, src/engine/reference-parity-weights.ts).
# Sets up .venv-reference-engine from requirements.txt (exact pins) on first use. No hub download.
#   bash scripts/reference/engine/run.sh [--full]   (--full adds SmolLM2's 30 layers: the opt-in test's fixture)
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/scripts/reference/engine"
venv="$root/.venv-reference-engine"
source "$root/scripts/interop/lib.sh"

started=$(date +%s)
ensure_venv "$venv" "$here/requirements.txt"
echo "== venv ready in $(( $(date +%s) - started )) s"
cd "$here"
TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1 PYTHONHASHSEED=0 "$venv/bin/python" -W ignore::UserWarning record.py "$root/src/engine/fixtures" "$@"
echo "== reference:engine recorded in $(( $(date +%s) - started )) s"
