#!/usr/bin/env bash
# npm run check:openenv — OpenEnv's own clients (openenv-core: GenericEnvClient, MCPToolClient in
# both its modes) and `openenv validate` against `agentrl serve-env`, for every environment
# (check.py). Sets up its own venv (.venv-openenv, from the pinned requirements.txt; reinstalled
# when requirements.txt changes), then runs check.py, which starts and stops the servers.
#   bash scripts/interop/openenv/run.sh [env ...]        (default: every env; PYTHON=python3.12 to choose)
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/scripts/interop/openenv"
venv="$root/.venv-openenv"
source "$root/scripts/interop/lib.sh"

started=$(date +%s)
ensure_venv "$venv" "$here/requirements.txt" --no-deps
"$venv/bin/pip" check > /dev/null
installed=$(date +%s)
echo "== venv ready in $((installed - started)) s"

status=0
"$venv/bin/python" "$here/check.py" "$@" || status=$?
echo "== check:openenv $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - installed )) s after the install"
exit "$status"
