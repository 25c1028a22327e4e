#!/usr/bin/env bash
# npm run check:lora — PEFT against agentrl's LoRA: agentrl trains adapters on a tiny model, exports
# the base (export-hf), the adapters (saveAdapter, PEFT's layout) and the merged weights; Python
# loads base + adapter with PeftModel.from_pretrained, and the merged folder alone, and compares
# their logits with agentrl's LoRA forward (<= 1e-4). Sets up .venv-lora from requirements.txt
# (exact pins) on first use. No hub download.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/scripts/interop/lora"
venv="$root/.venv-lora"
source "$root/scripts/interop/lib.sh"

started=$(date +%s)
ensure_venv "$venv" "$here/requirements.txt"
installed=$(date +%s)
echo "== venv ready in $((installed - started)) s"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentrl-check-lora-XXXXXX")"
trap 'rm -rf "$work"' EXIT INT TERM

cd "$root"
node --import tsx "$here/write-fixtures.ts" "$work"
status=0
TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1 "$venv/bin/python" "$here/check.py" "$work" || status=1
echo "== check:lora $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - installed )) s after the install"
exit "$status"
