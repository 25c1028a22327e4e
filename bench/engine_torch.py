"""PyTorch peer for `npm run bench:engine`: the same Llama-style model, train step and sampler.

Model: token embedding, RMSNorm, RoPE (half split), multi-head attention, SwiGLU MLP, tied head.
Train step: forward + cross-entropy + backward + global-norm clip + AdamW.
Generation: batch of prompts, KV cache, multinomial sampling, per-token log-probs.
Prints one JSON line. Run with Debian's python3-torch (and libopenblas0-pthread for a fast BLAS).
With {"mode": "real", …} it measures the SmolLM2-135M shape in transformers instead (run_real;
needs the pinned venv bench/engine.ts makes, with torch 2.x and transformers).
"""
import json, math, sys, time
import torch
import torch.nn.functional as F

args = json.loads(sys.argv[1])
torch.set_num_threads(args["threads"])


def run_real(args):
    """The SmolLM2-135M shape (random weights) in transformers' LlamaForCausalLM: scoring and sampling.

    Scoring: per-token log-probs of the targets of 16 × 256 tokens, in row chunks (as agentrl does,
    so no [16, 256, V] tensor). Generation: batch of equal-length prompts, KV cache (DynamicCache),
    multinomial sampling at temperature 1 with the sampled tokens' log-probs, a fixed number of tokens.
    """
    import resource
    from transformers import LlamaConfig, LlamaForCausalLM

    shape = args["shape"]
    config = LlamaConfig(
        vocab_size=shape["vocab"], hidden_size=shape["hidden"], intermediate_size=shape["intermediate"],
        num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"], num_key_value_heads=shape["kv_heads"],
        max_position_embeddings=shape["context"], rope_theta=shape["rope_theta"], rms_norm_eps=shape["rms_eps"],
        tie_word_embeddings=True, attn_implementation="sdpa",
    )
    model = LlamaForCausalLM(config).eval()
    V = shape["vocab"]

    @torch.inference_mode()
    def score(tokens):
        out = []
        for start in range(0, tokens.shape[0], args["score_chunk_rows"]):
            rows = tokens[start : start + args["score_chunk_rows"]]
            logits = model(rows).logits[:, :-1]
            out.append(torch.log_softmax(logits, -1).gather(-1, rows[:, 1:, None])[..., 0])
        return torch.cat(out)

    @torch.inference_mode()
    def generate(prompts, new_tokens):
        out = model(prompts, use_cache=True)
        cache, logits = out.past_key_values, out.logits[:, -1]
        tokens, logprobs = [], []
        for step in range(new_tokens):
            logp = torch.log_softmax(logits, -1)
            tok = torch.multinomial(logp.exp(), 1)
            tokens.append(tok)
            logprobs.append(logp.gather(1, tok))
            if step == new_tokens - 1:
                break
            out = model(tok, past_key_values=cache, use_cache=True)
            cache, logits = out.past_key_values, out.logits[:, -1]
        return torch.cat(tokens, 1), torch.cat(logprobs, 1)

    g = torch.Generator().manual_seed(0)
    seqs = torch.randint(0, V, (args["score_rows"], args["score_len"]), generator=g)
    prompts = torch.randint(0, V, (args["gen_batch"], args["gen_prompt"]), generator=g)
    score(seqs[:1, :32])
    generate(prompts[:, :8], 4)
    score_s, gen_s = [], []
    for _ in range(args["reps"]):
        t0 = time.perf_counter()
        score(seqs)
        score_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        generate(prompts, args["gen_new"])
        gen_s.append(time.perf_counter() - t0)
    print(json.dumps({
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "score_s": sorted(score_s)[len(score_s) // 2],
        "gen_tokens_per_s": args["gen_batch"] * args["gen_new"] / sorted(gen_s)[len(gen_s) // 2],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


if args.get("mode") == "real":
    run_real(args)
    sys.exit(0)
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
times = []
for _ in range(args["steps"]):
    t0 = time.perf_counter()
    train_step()
    times.append(time.perf_counter() - t0)
times.sort()
train_ms = times[len(times) // 2] * 1000

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


generate()
gtimes = []
for _ in range(args["gen_reps"]):
    t0 = time.perf_counter()
    generate()
    gtimes.append(time.perf_counter() - t0)
gtimes.sort()
gen_s = gtimes[len(gtimes) // 2]
print(json.dumps({
    "torch": torch.__version__,
    "threads": torch.get_num_threads(),
    "params": sum(p.numel() for p in model.parameters()),
    "train_step_ms": train_ms,
    "gen_tokens_per_s": GB * GN / gen_s,
}))
