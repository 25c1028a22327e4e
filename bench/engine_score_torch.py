"""PyTorch 2.x + transformers peer of bench:engine's scoring (bench/engine-inference.ts): the
per-token log-probs of the targets of rows x length tokens in LlamaForCausalLM (sdpa attention,
tied head), in chunks of 4 rows so no [rows, length, V] tensor is held (as agentrl does). Weights:
random of SmolLM2-135M's shape, or the real ones from `weights_dir` (a Hugging Face folder
bench:engine writes from the pulled GGUF, dequantized to float32 as agentrl loads it).
Best of `reps` runs after a warm-up. Prints one JSON line (a Measurement).
"""
import torch

from torch_peer import best_seconds, llama, peer_args, print_measurement

args = peer_args()
model = llama(args)
model.eval()


def token_rows(rows, length, vocab, seed=12345):
    """bench/engine-settings.ts's tokenRows: the same seeded LCG stream."""
    state, out = seed, []
    for _ in range(rows):
        row = []
        for _ in range(length):
            state = (state * 1103515245 + 12345) % 2**31
            row.append(state % vocab)
        out.append(row)
    return torch.tensor(out)


@torch.inference_mode()
def score(tokens):
    out = []
    for start in range(0, tokens.shape[0], 4):
        rows = tokens[start : start + 4]
        logits = model(rows).logits[:, :-1]
        out.append(torch.log_softmax(logits, -1).gather(-1, rows[:, 1:, None])[..., 0])
    return torch.cat(out)


sequences = token_rows(args["rows"], args["length"], args["shape"]["vocab"])
score(sequences[:1, :32])  # warm-up
print_measurement(
    f"PyTorch {torch.__version__} + transformers",
    {"scoreSeconds": best_seconds(lambda: score(sequences), args["reps"])},
    f"{args['weights']} weights; best of {args['reps']}",
)
