"""PyTorch peer of `bench/engine-train.ts`: the LoRA RL train step on the SmolLM2-135M shape.

transformers' LlamaForCausalLM (random weights, tied head, sdpa attention) with PEFT LoRA
(rank r, alpha, all seven projections), one step = forward of B × T tokens, the per-token
log-probs of the targets, the PPO-clip surrogate on them (token-mean over the loss mask, ratio
against old log-probs equal to the current ones, seeded advantages), backward, global-norm clip
and AdamW on the adapters. Prints one JSON line. Runs in check:lora's pinned venv (.venv-lora:
torch, transformers, peft).
"""
import json, resource, sys, time
import torch

args = json.loads(sys.argv[1])
torch.set_num_threads(args["threads"])
from transformers import LlamaConfig, LlamaForCausalLM
from peft import LoraConfig, get_peft_model

shape = args["shape"]
config = LlamaConfig(
    vocab_size=shape["vocab"], hidden_size=shape["hidden"], intermediate_size=shape["intermediate"],
    num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"], num_key_value_heads=shape["kv_heads"],
    max_position_embeddings=shape["context"], rope_theta=shape["rope_theta"], rms_norm_eps=shape["rms_eps"],
    tie_word_embeddings=True, attn_implementation="sdpa",
)
torch.manual_seed(0)
base = LlamaForCausalLM(config)
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
times = []
for _ in range(args["reps"]):
    t0 = time.perf_counter()
    step()
    times.append(time.perf_counter() - t0)
print(json.dumps({
    "torch": torch.__version__,
    "threads": torch.get_num_threads(),
    "step_s": sorted(times)[len(times) // 2],
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
