"""PyTorch peer of bench:engine's tiny reference GPT (bench/engine-tiny.ts): the same Llama-style
model, train step and sampler.

Model: token embedding, RMSNorm, RoPE (half split), multi-head attention, SwiGLU MLP, tied head.
Train step: forward + cross-entropy + backward + global-norm clip + AdamW.
Generation: batch of prompts, KV cache, multinomial sampling, per-token log-probs.
Prints one JSON line (a Measurement). Runs under Debian's python3-torch (with libopenblas0-pthread
for a fast BLAS) and under the pinned PyTorch 2.x venv; bench:engine takes the best.
"""
import math
import torch
import torch.nn.functional as F

from torch_peer import median_seconds, peer_args, print_measurement

args = peer_args()
torch.manual_seed(0)
V, D, L, H = args["vocab"], args["hidden"], args["layers"], args["heads"]
FF, T, B = args["intermediate"], args["context"], args["batch"]
hd = D // H


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n1 = torch.nn.Parameter(torch.ones(D))
        self.n2 = torch.nn.Parameter(torch.ones(D))
        self.wq = torch.nn.Linear(D, D, bias=False)
        self.wk = torch.nn.Linear(D, D, bias=False)
        self.wv = torch.nn.Linear(D, D, bias=False)
        self.wo = torch.nn.Linear(D, D, bias=False)
        self.gate = torch.nn.Linear(D, FF, bias=False)
        self.up = torch.nn.Linear(D, FF, bias=False)
        self.down = torch.nn.Linear(FF, D, bias=False)


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def rope(x, cos, sin):
    x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(V, D)
        self.blocks = torch.nn.ModuleList([Block() for _ in range(L)])
        self.norm = torch.nn.Parameter(torch.ones(D))
        inv = 10000 ** (-torch.arange(0, hd, 2).float() / hd)
        ang = torch.arange(T).float()[:, None] * inv[None]
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())
        self.register_buffer("mask", torch.tril(torch.ones(T, T)))

    def forward(self, tokens, cache=None, pos=0):
        b, t = tokens.shape
        x = self.embed(tokens)
        cos, sin = self.cos[pos : pos + t], self.sin[pos : pos + t]
        new_cache = []
        for i, blk in enumerate(self.blocks):
            h = rms(x, blk.n1)
            q = rope(blk.wq(h).view(b, t, H, hd).transpose(1, 2), cos, sin)
            k = rope(blk.wk(h).view(b, t, H, hd).transpose(1, 2), cos, sin)
            v = blk.wv(h).view(b, t, H, hd).transpose(1, 2)
            if cache is not None:
                # Preallocated cache [b, H, T, hd]: write this step's keys/values in place.
                ck, cv = cache[i]
                ck[:, :, pos : pos + t] = k
                cv[:, :, pos : pos + t] = v
                k, v = ck[:, :, : pos + t], cv[:, :, : pos + t]
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
            if t > 1:
                scores = scores.masked_fill(self.mask[:t, :t] == 0, float("-inf"))
            att = torch.softmax(scores, -1) @ v
            x = x + blk.wo(att.transpose(1, 2).reshape(b, t, D))
            h = rms(x, blk.n2)
            x = x + blk.down(F.silu(blk.gate(h)) * blk.up(h))
        logits = rms(x, self.norm) @ self.embed.weight.T
        return logits, new_cache


model = Model()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
data = torch.randint(0, V, (B, T + 1))  # T input positions, as in agentrl's step


def train_step():
    logits, _ = model(data[:, :T])
    loss = F.cross_entropy(logits.reshape(-1, V), data[:, 1 : T + 1].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.item()


for _ in range(args["warmup"]):
    train_step()
train_s = median_seconds(train_step, args["steps"])

GB, GP, GN = args["gen_batch"], args["gen_prompt"], args["gen_new"]


@torch.inference_mode()
def generate():
    prompts = torch.randint(0, V, (GB, GP))
    cache = [(torch.empty(GB, H, GP + GN, hd), torch.empty(GB, H, GP + GN, hd)) for _ in range(L)]
    logits, _ = model(prompts, cache, 0)
    logits = logits[:, -1]
    out, lps = [], []
    for s in range(GN):
        logp = torch.log_softmax(logits, -1)
        tok = torch.multinomial(logp.exp(), 1)
        lps.append(logp.gather(1, tok))
        out.append(tok)
        logits, _ = model(tok, cache, GP + s)
        logits = logits[:, -1]
    return torch.cat(out, 1)


generate()  # warm-up
gen_s = median_seconds(generate, args["gen_reps"])
print_measurement(
    f"PyTorch {torch.__version__}",
    {"trainStepSeconds": train_s, "genTokensPerSecond": GB * GN / gen_s},
    f"median of {args['steps']} steps, {args['gen_reps']} generations",
    threads=f"{torch.get_num_threads()} + BLAS {args['blas_threads']}",
)
