"""PyTorch 2.x + transformers + PEFT peer of bench:engine's LoRA PPO step (bench/engine-train.ts).

transformers' LlamaForCausalLM (sdpa attention, tied head; random weights of SmolLM2-135M's shape,
or the real ones from `weights_dir`) with PEFT LoRA (rank r, alpha, dropout 0, all seven
projections); one step = forward of rows x length tokens, the per-token log-probs of the targets,
the PPO-clip surrogate on them (token-mean over the loss mask, ratio against old log-probs equal to
the current ones, seeded advantages), backward, global-norm clip and AdamW on the adapters.
Best of `reps` steps after a warm-up step. Prints one JSON line (a Measurement).
"""
import torch

from torch_peer import best_seconds, llama, peer_args, print_measurement

args = peer_args()  # torch's thread count set before transformers and PEFT load
from peft import LoraConfig, get_peft_model  # noqa: E402

shape = args["shape"]
base = llama(args)
lora = LoraConfig(r=args["rank"], lora_alpha=args["alpha"], lora_dropout=0.0,
                  target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
model = get_peft_model(base, lora)
model.train()
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(trainable, lr=1e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0)

g = torch.Generator().manual_seed(0)
B, T = args["rows"], args["length"]
tokens = torch.randint(0, shape["vocab"], (B, T), generator=g)
mask = torch.zeros(B, T - 1)
mask[:, args["prompt"] - 1 :] = 1
advantages = torch.rand(B, T - 1, generator=g) - 0.5


def step():
    logits = model(tokens).logits[:, :-1]  # [B, T-1, V]
    logprobs = torch.log_softmax(logits.float(), -1).gather(-1, tokens[:, 1:, None])[..., 0]
    ratio = torch.exp(logprobs - logprobs.detach())
    surrogate = torch.maximum(-advantages * ratio, -advantages * ratio.clamp(0.8, 1.2))
    loss = (surrogate * mask).sum() / mask.sum()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(trainable, 1.0)
    optimizer.step()
    return loss.item()


step()  # warm-up
print_measurement(
    f"PyTorch {torch.__version__} + transformers + PEFT",
    {"stepSeconds": best_seconds(step, args["reps"])},
    f"{args['weights']} weights; best of {args['reps']} after a warm-up step",
)
