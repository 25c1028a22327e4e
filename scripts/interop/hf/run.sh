#!/usr/bin/env bash
# npm run check:hf — transformers (no torch) against agentrl's `export-hf` folder: AutoTokenizer
# encode/decode parity, apply_chat_template token-identical to agentrl's rendering on a seeded set
# of conversations (tools, tool calls, text parts, special-token text), generation_config's
# suppress_tokens. Sets up .venv-hf-ci from requirements-ci.txt (exact pins) on first use; writes
# the model folder with agentrl into a temp dir (no hub download).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/scripts/interop/hf"
venv="$root/.venv-hf-ci"
source "$root/scripts/interop/lib.sh"

started=$(date +%s)
ensure_venv "$venv" "$here/requirements-ci.txt"
installed=$(date +%s)
echo "== venv ready in $((installed - started)) s"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentrl-check-hf-XXXXXX")"
trap 'rm -rf "$work"' EXIT INT TERM

cd "$root"
node --import tsx "$here/write-fixtures.ts" "$work"
status=0
TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1 "$venv/bin/python" "$here/check.py" "$work" || status=1
echo "== check:hf $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - installed )) s after the install"
exit "$status"
