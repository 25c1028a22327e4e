#!/usr/bin/env bash
# Regenerates src/algorithms/fixtures/off-policy-reference.json with PyTorch (CPU, float64): the reference values
# that off-policy-correction.test.ts and losses/cispo.test.ts check agentrl's pure functions against.
# Sets up .venv-off-policy from requirements.txt (exact pins) on first use.   bash scripts/reference/off-policy/run.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/scripts/reference/off-policy"
source "$root/scripts/interop/lib.sh"
ensure_venv "$root/.venv-off-policy" "$here/requirements.txt"
CUDA_VISIBLE_DEVICES="" "$root/.venv-off-policy/bin/python" "$here/reference.py" "$root/src/algorithms/fixtures/off-policy-reference.json"
