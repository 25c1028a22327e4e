#!/usr/bin/env bash
# npm run check:tinker — agentrl's Tinker client against three witnesses, all on 127.0.0.1, no network, no key:
#   - a real SkyRL Tinker server (skyrl 0.3.0, the newest on PyPI; JAX on CPU) that trains a tiny random Llama;
#   - a strict server in front of it (strict-server/): every request checked against the official tinker SDK's
#     own types (tinker 0.38.0: pydantic request models, protobuf schema), logged one JSON line each;
#   - the official tinker SDK itself, unchanged, on the same server and the same numbers.
# Steps (each prints ok/FAIL lines and its time; the last line says passed/FAILED):
#   1. strict-server/self_test.py — the SDK passes the strict server unchanged; wrong requests are refused;
#   2. check.ts — GRPO iterations through TinkerPolicy (sampled = forward log-probs, weights move, reload scores the same);
#   3. sdk-witness.py — the SDK sends the same requests and gets the same numbers;
#   4. contract-check.ts — policyContract({ trainable: true }) for TinkerPolicy;
#   5. learning-check.ts — the learning signal: GRPO updates through TinkerPolicy raise the expected reward
#      (sdk-learning.py: the SDK on the same task, its witness);
#      then `agentrl train --backend tinker` (GRPO on bandit) and train-check.ts: the run in the store, time split;
#   6. `agentrl train --resume` of that run (restore = create-via-load into a fresh model);
#      (with --max-grad-norm 1: the strict log must show grad_clip_norm on every optim_step);
#   7. `agentrl sft|dpo --backend tinker` — run when the CLI has the flag, else printed as SKIP (not failed);
#   8. `agentrl gateway --backend tinker` (gateway-check.ts): a session sampled by the server, recorded, SIGTERM;
#   9. README's hosted-Tinker recipe as written (its placeholders filled: the strict server's URL, a tml- key, a
#      ./Qwen3-4B-Instruct-2507 tokenizer folder; the strict server serves that hub name with SkyRL's tiny model),
#      with CI-sized budget flags appended;
#  10. `agentrl train --env negotiation --policies per-role --backend tinker`: each role its own LoRA run;
#  11. request-cost.py — requests, bytes and tokens per training iteration, from the strict server's log.
#   ITERATIONS=2 PORT=8765 bash scripts/check-tinker/run.sh
# STRICT=0 points the client steps at SkyRL directly (the SDK witness and the self-test still use the strict server).
# The venv is the slim one (.venv-tinker-slim: requirements-slim.txt with --no-deps, Python 3.12, no torch/CUDA;
# shims/ stand in for peft and torch; ~2 min, 1.5 GB); VENV=full uses .venv-tinker (requirements.txt, with torch).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/scripts/interop/lib.sh"
here="$root/scripts/check-tinker"
port="${PORT:-8765}"
strict_port="${STRICT_PORT:-$((port + 1))}"
iterations="${ITERATIONS:-2}"
python="${PYTHON:-python3.12}"
if ! "$python" --version > /dev/null 2>&1; then
  python="$(ls /root/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null | head -1)"
  [ -n "$python" ] || { echo "check:tinker needs Python 3.12 (skyrl 0.3.0's types need it): set PYTHON"; exit 1; }
fi

started=$(date +%s)
if [ "${VENV:-slim}" = full ]; then
  venv="$root/.venv-tinker"
  stamp="$(cat "$here/requirements.txt")"
else
  venv="$root/.venv-tinker-slim"
  stamp="$(cat "$here/requirements-slim.txt" "$here/shims/peft/__init__.py" "$here/shims/torch/__init__.py")"
fi
if [ ! -f "$venv/.installed" ] || [ "$(cat "$venv/.installed")" != "$stamp" ]; then
  echo "== installing $venv (a few minutes; jax is large)"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  if [ "${VENV:-slim}" = full ]; then
    "$venv/bin/pip" install --quiet --progress-bar off -r "$here/requirements.txt"
  else
    "$venv/bin/pip" install --quiet --progress-bar off --no-deps -r "$here/requirements-slim.txt"
    cp -r "$here/shims/peft" "$here/shims/torch" "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/"
  fi
  printf '%s' "$stamp" > "$venv/.installed"
fi
installed=$(date +%s)
echo "== venv $venv ready in $((installed - started)) s ($("$venv/bin/python" -c 'import tinker; from importlib.metadata import version; print("tinker", version("tinker"), "· skyrl", version("skyrl"))'))"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentrl-check-tinker-XXXXXX")"
server_pid=""
strict_pid=""
cleanup() {
  stop_process_group "$strict_pid"
  stop_process_group "$server_pid"
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

node --import tsx "$here/write-model.ts" "$work/model"

# skyrl's API server starts its engine as `uv run <its own uv flags> --extra tinker --extra jax -m skyrl.tinker.engine …`,
# reading the flags from its parent's command line. This shim is that parent: it runs the module with the venv's
# python as a child (not exec), so the API sees `uv run -m skyrl.tinker.api` above it.
mkdir -p "$work/bin"
cat > "$work/bin/uv" <<'SHIM'
#!/usr/bin/env bash
while [ "$#" -gt 0 ] && [ "$1" != "-m" ]; do shift; done
"$TINKER_VENV_PYTHON" "$@"
SHIM
chmod +x "$work/bin/uv"

wait_healthy() {
  local url="$1" pid="$2" log="$3"
  for _ in $(seq 1 120); do
    curl -sf "$url/api/v1/healthz" > /dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { echo "server exited:"; tail -40 "$log"; return 1; }
    sleep 1
  done
  echo "server at $url not healthy after 120 s"; tail -40 "$log"; return 1
}

echo "== starting SkyRL (skyrl.tinker.api) on 127.0.0.1:$port and the strict server on 127.0.0.1:$strict_port (logs in $work)"
PATH="$work/bin:$PATH" TINKER_VENV_PYTHON="$venv/bin/python" JAX_PLATFORMS=cpu setsid "$work/bin/uv" run -m skyrl.tinker.api \
  --base-model "$work/model" --host 127.0.0.1 --port "$port" \
  --database-url "sqlite:///$work/tinker.db" --checkpoints-base "$work/checkpoints" \
  --backend-config '{"max_lora_adapters": 32, "max_lora_rank": 32, "sample_max_num_sequences": 8}' > "$work/server.log" 2>&1 &
server_pid=$!
wait_healthy "http://127.0.0.1:$port" "$server_pid" "$work/server.log"
requests="$work/requests.jsonl"
# README's hosted recipe (the lines under "# hosted Tinker", continuations joined, comments dropped) and its base model.
readme_recipe="$(awk '/^# hosted Tinker/{on=1; next} on && /^$/{exit} on {sub(/[ \t]+#.*$/, ""); sub(/\\$/, ""); printf "%s ", $0}' "$root/README.md")"
readme_model="$(printf '%s' "$readme_recipe" | sed -n 's/.*--base-model \([^ ]*\).*/\1/p')"
(cd "$here/strict-server" && exec setsid "$venv/bin/python" strict_server.py --upstream "http://127.0.0.1:$port" \
  --port "$strict_port" --log "$requests" --serve-as "${readme_model:-none}=$work/model" > "$work/strict.log" 2>&1) &
strict_pid=$!
wait_healthy "http://127.0.0.1:$strict_port" "$strict_pid" "$work/strict.log"

status=0
export TINKER_API_KEY="${TINKER_API_KEY:-tml-agentrl-check-local}"  # the strict server, like hosted Tinker, wants a tml- key
strict_url="http://127.0.0.1:$strict_port"
base_url="$strict_url"
[ "${STRICT:-1}" = 0 ] && base_url="http://127.0.0.1:$port"
step() { local label="$1"; shift; local t0; t0=$(date +%s); echo "== $label"; "$@" || status=1; echo "   ($(( $(date +%s) - t0 )) s)"; }
lines() { wc -l < "$requests" | tr -d ' '; }

step "strict server self-test: the official SDK passes it unchanged; requests the SDK would not send are refused" \
  "$venv/bin/python" "$here/strict-server/self_test.py" --base-url "$strict_url" --base-model "$work/model" --log "$requests"
step "witness 1: agentrl TinkerPolicy ($iterations GRPO iterations) via $base_url" \
  node --import tsx "$here/check.ts" --base-url "$base_url" --base-model "$work/model" --out "$work/witness.json" --iterations "$iterations"
if [ -f "$work/witness.json" ]; then
  step "witness 2: the official tinker SDK, same requests, same numbers (via the strict server)" \
    "$venv/bin/python" "$here/sdk-witness.py" "$work/witness.json" "$strict_url"
else
  echo "== witness 2 not run: witness 1 wrote no witness.json"; status=1
fi
step "policyContract({ trainable: true }) for TinkerPolicy" \
  env TINKER_BASE_URL="$base_url" TINKER_BASE_MODEL="$work/model" node --import tsx --test --test-reporter=spec "$here/contract-check.ts"

before_learning=$(lines)
step "learning signal: GRPO through TinkerPolicy raises the expected reward (answer in ASCII)" \
  node --import tsx "$here/learning-check.ts" --base-url "$base_url" --base-model "$work/model"
after_learning=$(lines)
step "the learning signal's witness: the official SDK on the same task (importance_sampling on the server)" \
  "$venv/bin/python" "$here/sdk-learning.py" "$strict_url" "$work/model"

train_flags=(--env bandit --backend tinker --base-url "$base_url" --base-model "$work/model" --lora-rank 8
  --tinker-loss-reduction sequence-mean --store "$work/runs.db" --run-name tinker-e2e --demonstrations 8 --sft-steps 2
  --sft-batch-size 4 --tasks-per-iteration 2 --group-size 4 --max-turns 1 --max-new-tokens 12 --test-episodes 8
  --validation-episodes 2 --validate-every 0 --checkpoint-every 1 --learning-rate 0.01 --max-grad-norm 1)
before_train=$(lines)
step "agentrl train --backend tinker (GRPO, runRl, recorded in the run store)" \
  node "$root/bin/agentrl.js" train "${train_flags[@]}" --out "$work/run" --iterations "$iterations"
after_train=$(lines)
# --max-grad-norm reaches the server: every optim_step of the run carries grad_clip_norm > 0 (SkyRL 0.3.0 then drops it: logged).
step "--max-grad-norm 1 sent as AdamParams.grad_clip_norm on every optim_step of the run (the strict server's log)" \
  "$venv/bin/python" -c 'import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]).read().splitlines()[int(sys.argv[2]):int(sys.argv[3])]]
optim = [row for row in rows if row.get("path") == "/api/v1/optim_step" and not row.get("replayed")]
clipped = [row for row in optim if "adam_params.grad_clip_norm" in (row.get("dropped_by_upstream") or [])]
print(("ok  " if optim and len(clipped) == len(optim) else "FAIL") + f" {len(clipped)} of {len(optim)} optim_step requests carry grad_clip_norm > 0")
sys.exit(0 if optim and len(clipped) == len(optim) else 1)' "$requests" "$before_train" "$after_train"
step "the run in the store; time split" \
  node --import tsx "$here/train-check.ts" --store "$work/runs.db" --run-name tinker-e2e --iterations "$iterations"
step "agentrl train --resume tinker-e2e (restore into a fresh model: load_weights as its first request)" \
  node "$root/bin/agentrl.js" train "${train_flags[@]}" --out "$work/run" --resume tinker-e2e --iterations "$((iterations + 1))"
# agentrl sft takes chat JSONL; agentrl dpo the train flags. Each runs when its CLI has --backend (SKIP otherwise).
for _ in 1 2 3 4; do echo '{"messages":[{"role":"user","content":"Pick an arm: A or B."},{"role":"assistant","content":"<answer>B</answer>"}]}'; done > "$work/sft.jsonl"
tinker_flags=(--backend tinker --base-url "$base_url" --base-model "$work/model" --lora-rank 8)
if node "$root/bin/agentrl.js" sft --help 2>&1 | grep -q -- '--backend'; then
  step "agentrl sft --backend tinker (2 steps on 4 conversations)" node "$root/bin/agentrl.js" sft "${tinker_flags[@]}" \
    --data "$work/sft.jsonl" --out "$work/sft" --steps 2 --batch-size 2
else
  echo "== SKIP agentrl sft --backend tinker: this CLI's sft has no --backend yet (the step is ready)"
fi
if node "$root/bin/agentrl.js" dpo --help 2>&1 | grep -q -- '--backend'; then
  step "agentrl dpo --backend tinker (1 iteration after a 2-step warm start)" node "$root/bin/agentrl.js" dpo --env bandit \
    "${tinker_flags[@]}" --store "$work/runs.db" --out "$work/dpo" --run-name tinker-dpo --demonstrations 8 --sft-steps 2 \
    --sft-batch-size 4 --iterations 1 --max-turns 1 --max-new-tokens 12 --test-episodes 2 --validation-episodes 2
else
  echo "== SKIP agentrl dpo --backend tinker: this CLI's dpo has no --backend yet (the step is ready)"
fi
step "agentrl gateway --backend tinker: a session sampled by the server, recorded with its ids and log-probs" \
  node --import tsx "$here/gateway-check.ts" --base-url "$base_url" --base-model "$work/model" --store "$work/runs.db"
# README's hosted recipe as written, in a folder holding its ./<model> tokenizer folder; budget flags appended.
readme_dir="$work/readme"
node --import tsx "$here/write-tokenizer.ts" "$readme_dir/${readme_model##*/}" > /dev/null
read -ra readme_words <<< "${readme_recipe//https:\/\/<tinker service>/$base_url}"
readme_args=()
for word in "${readme_words[@]}"; do
  case "$word" in
    TINKER_API_KEY=*|npx) ;;
    agentrl) readme_args+=("$root/bin/agentrl.js") ;;
    *) readme_args+=("$word") ;;
  esac
done
echo "   README: ${readme_recipe}"
step "README's hosted-Tinker recipe as written (its model served by the strict server; CI-sized: 1 iteration)" \
  bash -c 'cd "$1" && shift && exec node "$@"' _ "$readme_dir" "${readme_args[@]}" --store "$work/runs.db" --run-name readme \
    --out "$readme_dir/run" --iterations 1 --tasks-per-iteration 1 --group-size 2 --max-turns 1 --max-new-tokens 16 \
    --test-episodes 2 --validation-episodes 1 --validate-every 0
# A policy per role: each role restored into its own LoRA run on the server (before the fix, every role was one).
before_roles=$(lines)
step "agentrl train --env negotiation --policies per-role --backend tinker (1 iteration)" \
  node "$root/bin/agentrl.js" train --env negotiation --policies per-role "${tinker_flags[@]}" --no-warm-start \
    --store "$work/runs.db" --run-name tinker-roles --out "$work/roles" --iterations 1 --tasks-per-iteration 1 \
    --group-size 2 --max-turns 2 --max-new-tokens 12 --test-episodes 2 --kl-coef 0
after_roles=$(lines)
step "each role saved from its own model on the server (save_weights of final/alice and final/bob: two model ids)" \
  "$venv/bin/python" -c 'import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]).read().splitlines()[int(sys.argv[2]):int(sys.argv[3])]]
final = [row.get("model_id") for row in rows if row.get("path") == "/api/v1/save_weights"][-2:]
ok = len(final) == 2 and None not in final and final[0] != final[1]
print(("ok  " if ok else "FAIL") + f" the last two save_weights (final/alice, final/bob) from the models {final}")
sys.exit(0 if ok else 1)' "$requests" "$before_roles" "$after_roles"
step "cost per GRPO update of learning-check.ts (6 updates; its expected-reward forward included), from the strict server's log" \
  "$venv/bin/python" "$here/strict-server/request_cost.py" --log "$requests" --from "$before_learning" --to "$after_learning" --iterations 6
step "cost per iteration of the agentrl train run (setup and warm start included), from the strict server's log" \
  "$venv/bin/python" "$here/strict-server/request_cost.py" --log "$requests" --from "$before_train" --to "$after_train" --iterations "$iterations"
[ "$status" -eq 0 ] || { echo "== SkyRL log (last 30 lines)"; tail -30 "$work/server.log"; echo "== strict server log"; tail -20 "$work/strict.log"; }
if [ -n "${KEEP_LOG:-}" ]; then cp "$requests" "$KEEP_LOG"; echo "== request log kept at $KEEP_LOG"; fi
echo "== check:tinker $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - installed )) s after the install"
exit "$status"
