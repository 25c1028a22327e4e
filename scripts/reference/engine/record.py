"""npm run reference:engine — PyTorch + transformers (+ PEFT) oracles for agentrl's engine.

For each model of MODELS, on weights made by weights.py (rebuilt bit for bit by the TypeScript
test, so no weights are checked in), records at float32 (transformers as it runs) and float64
(the exact reference, hf_models.py):
  - per-token log-probs and entropies of a few sequences at temperature 1 and 0.7;
  - the gradient of the surrogate S = sum_t w_t * log pi_T(token_t | prefix) (core/loss.ts: what the
    engine back-propagates for a loss with dLoss/dlogprobs = w), for the full weights and for PEFT
    LoRA adapters on the seven projections; on the value-head model S also has e_t * H_t (entropy
    of pi_T) and u_t * V_t (TRL's value head, a Linear on the final normed hidden state at t - 1);
  - two steps of torch.optim.AdamW on S after global-norm clipping (torch.nn.utils.clip_grad_norm_),
    weight decay on matrices only (agentrl's decayedNames; all adapters under LoRA, where a value head
    trains too as PEFT's modules_to_save, undecayed): the pre-clip
    gradient norm and each array's change.
Large arrays are kept as their norm plus a sample of elements (weights.sample_indices), stored as
the hex of the little-endian float32 bytes of the float64 values (hex, not base64: its alphabet
0-9a-f spells no words, so no fixture text matches a grep for a name). float32's own error against float64 is written beside each
quantity, so a test can say how the engine's accuracy compares with PyTorch's.

    python record.py OUT_DIR [--full]     (--full adds SmolLM2-135M's 30 layers; minutes)
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from hf_models import causal_lm, generated, hf_model, lora_shapes, parameter_shapes, peft_model, read_array, tensor_of
from weights import bits_checksum, sample_indices, stream_hashes, uniform_array

TINY = dict(maxSeqLen=64, ropeTheta=10000, rmsNormEps=1e-6, attentionBias=False, valueHead=False)
SMOLLM2 = dict(vocabSize=49152, hiddenSize=576, numHeads=9, numKvHeads=3, intermediateSize=1536, maxSeqLen=64,
               ropeTheta=100000, rmsNormEps=1e-5, tieWordEmbeddings=True, attentionBias=False, valueHead=False)
MODELS = {
    "tiny-llama-tied": dict(config=dict(TINY, vocabSize=96, hiddenSize=32, numLayers=2, numHeads=4, numKvHeads=2,
                                        intermediateSize=64, tieWordEmbeddings=True),
                            seed=1, lengths=[12, 5, 17], lora=dict(rank=4, alpha=8), embed=0.6, gradientTemperatures=[1, 0.7]),
    "tiny-llama-untied": dict(config=dict(TINY, vocabSize=72, hiddenSize=32, numLayers=2, numHeads=4, numKvHeads=1,
                                          intermediateSize=48, tieWordEmbeddings=False),
                              seed=2, lengths=[9, 14], lora=dict(rank=4, alpha=4), embed=0.6, gradientTemperatures=[1]),
    "tiny-qwen2": dict(config=dict(TINY, vocabSize=64, hiddenSize=48, numLayers=2, numHeads=6, numKvHeads=2,
                                   intermediateSize=80, tieWordEmbeddings=True, attentionBias=True),
                       seed=3, lengths=[11, 6], lora=dict(rank=4, alpha=16), embed=0.5, gradientTemperatures=[1]),
    "tiny-llama-value-head": dict(config=dict(TINY, vocabSize=80, hiddenSize=32, numLayers=2, numHeads=4, numKvHeads=2,
                                              intermediateSize=64, tieWordEmbeddings=True, valueHead=True),
                                  seed=6, lengths=[10, 13], lora=dict(rank=4, alpha=8), embed=0.6,
                                  gradientTemperatures=[1, 0.7], valueTerms=True),
    "smollm2-2-layers": dict(config=dict(SMOLLM2, numLayers=2), seed=4, lengths=[10, 16], lora=dict(rank=16, alpha=32),
                             embed=0.2, gradientTemperatures=[1]),
}
FULL_MODELS = {
    "smollm2-30-layers": dict(config=dict(SMOLLM2, numLayers=30), seed=5, lengths=[8, 12], lora=None, embed=0.2,
                              gradientTemperatures=[1], adamw=False),
}
SCORE_TEMPERATURES = [1, 0.7]
ADAMW = dict(learningRate=1e-2, weightDecay=0.1, maxGradNorm=1.0, beta1=0.9, beta2=0.95, epsilon=1e-8)
ADAMW_STEPS = 2


def parameter_specs(spec: dict) -> list[dict]:
    """How each weight is generated: its stream (position + 1), scale and offset (norms around 1)."""
    specs = []
    for position, (name, shape) in enumerate(parameter_shapes(spec["config"])):
        leaf = name.rsplit(".", 1)[-1]
        if leaf.endswith("Norm"):
            scale, offset = 0.25, 1.0
        elif leaf.startswith("b"):
            scale, offset = 0.2, 0.0
        elif name == "embed":
            scale, offset = spec["embed"], 0.0
        elif name == "lmHead":
            scale, offset = 2 * (3 / shape[0]) ** 0.5, 0.0
        else:
            scale, offset = (3 / shape[0]) ** 0.5, 0.0  # std 1/sqrt(in)
        specs.append(dict(name=name, shape=shape, stream=position + 1, scale=scale, offset=offset))
    return specs


def adapter_specs(spec: dict) -> list[dict]:
    """LoRA A: std 1/sqrt(in); B nonzero (std 0.25/sqrt(r)), so A's gradient is nonzero too."""
    rank = spec["lora"]["rank"]
    specs = []
    for position, (name, shape) in enumerate(lora_shapes(spec["config"], rank)):
        scale = (3 / shape[0]) ** 0.5 if name.endswith("loraA") else 0.25 * (3 / rank) ** 0.5
        specs.append(dict(name=name, shape=shape, stream=1001 + position, scale=scale, offset=0.0))
    return specs


TERM_STREAMS = {"weights": 3001, "entropyWeights": 4001, "valueWeights": 5001}


def batch(spec: dict) -> tuple[list[list[int]], dict]:
    """Token ids (uniform over the vocabulary) and the surrogate's per-token weights in [-1, 1):
    w on log-probs (w_0 = 0, every 4th 0); with spec["valueTerms"] also e on entropies and u on
    values (index 0 = 0)."""
    vocab = spec["config"]["vocabSize"]
    keys = list(TERM_STREAMS) if spec.get("valueTerms") else ["weights"]
    sequences, terms = [], {key: [] for key in keys}
    for j, length in enumerate(spec["lengths"]):
        sequences.append([int(h % vocab) for h in stream_hashes(spec["seed"], 2001 + j, length)])
        for key in keys:
            w = uniform_array(spec["seed"], TERM_STREAMS[key] + j, [length], 1.0, 0.0).astype(np.float64)
            w[0] = 0.0
            if key == "weights":
                w[0::4] = 0.0
            terms[key].append([float(x) for x in w])
    return sequences, terms


def token_heads(model, tokens: list[int], temperature: float):
    """At t = 1..T-1, tensors [T-1]: log pi_T(token_t | prefix), the entropy of pi_T, and the value
    head on the final (normed) hidden state at t-1 (None without one): agentrl's alignment, core/loss.ts."""
    lm = causal_lm(model)
    ids = torch.tensor([tokens])
    hidden = lm.model(input_ids=ids).last_hidden_state[0, :-1]  # [T-1, D]
    logp = torch.log_softmax(lm.lm_head(hidden) / temperature, dim=-1)  # [T-1, V]
    picked = logp.gather(-1, ids[0, 1:, None])[:, 0]  # [T-1]
    values = lm.v_head(hidden)[:, 0] if hasattr(lm, "v_head") else None  # [T-1]
    return picked, -(logp.exp() * logp).sum(-1), values


def scores(model, sequences, temperature):
    """Per sequence, lists aligned to the tokens (index 0 = 0): log-probs, entropies, values (or None)."""
    out = {"logprobs": [], "entropies": [], "values": []}
    with torch.no_grad():
        for tokens in sequences:
            for key, row in zip(out, token_heads(model, tokens, temperature)):
                out[key].append(None if row is None else [0.0] + row.tolist())
    return out


def surrogate(model, sequences, terms, temperature):
    """S = sum_t w_t log pi_t (+ e_t H_t + u_t V_t when the terms have them)."""
    dtype = next(model.parameters()).dtype
    total = torch.zeros((), dtype=dtype)
    for j, tokens in enumerate(sequences):
        picked, entropy, values = token_heads(model, tokens, temperature)
        for key, row in (("weights", picked), ("entropyWeights", entropy), ("valueWeights", values)):
            if key in terms:
                total = total + (torch.tensor(terms[key][j][1:], dtype=dtype) * row).sum()
    return total


def encode(values: np.ndarray) -> str:
    """Hex of the little-endian float32 bytes, 8 digits per element (reference-parity-fixtures.ts decodeSamples)."""
    return np.ascontiguousarray(values, dtype="<f4").tobytes().hex()


def sample_error(value: np.ndarray, reference: np.ndarray) -> float:
    """||x_s - r_s|| / max(||r_s||, 1e-4 ||r||, 1e-30) over the sample (the TypeScript test's measure)."""
    idx = sample_indices(reference.size)
    x, r = value.reshape(-1)[idx], reference.reshape(-1)[idx]
    floor = max(float(np.linalg.norm(r)), 1e-4 * float(np.linalg.norm(reference)), 1e-30)
    return float(np.linalg.norm(x - r)) / floor


def array_record(name: str, exact: np.ndarray, single: np.ndarray) -> dict:
    norm = float(np.linalg.norm(exact))
    return dict(
        name=name,
        norm=norm,
        samples=encode(exact.reshape(-1)[sample_indices(exact.size)]),
        fp32=dict(normRelativeError=abs(float(np.linalg.norm(single)) - norm) / max(norm, 1e-30),
                  sampleRelativeError=sample_error(single, exact)),
    )


def trained_tensors(model, names):
    return [(name, *tensor_of(model, name)) for name in names]


def gradient(model, names, sequences, terms, temperature):
    model.zero_grad(set_to_none=True)
    value = surrogate(model, sequences, terms, temperature)
    value.backward()
    return float(value.detach()), {name: read_array(t.grad, transposed) for name, t, transposed in trained_tensors(model, names)}


def gradient_record(models, names, sequences, terms, temperature, kind):
    (v64, g64), (v32, g32) = (gradient(m, names, sequences, terms, temperature) for m in models)
    for n in names:
        agree(f"{kind} gradient {n}", sample_error(g32[n], g64[n]), 1e-3)
    return dict(kind=kind, temperature=temperature, surrogate=dict(fp64=v64, fp32=v32),
                arrays=[array_record(n, g64[n], g32[n]) for n in names])


def adamw_run(model, names, sequences, terms, decayed):
    """ADAMW_STEPS steps of clip + torch.optim.AdamW; per step the pre-clip norm and each array's change."""
    tensors = trained_tensors(model, names)
    groups = [dict(params=[t for n, t, _ in tensors if n in decayed], weight_decay=ADAMW["weightDecay"]),
              dict(params=[t for n, t, _ in tensors if n not in decayed], weight_decay=0.0)]
    optimizer = torch.optim.AdamW([g for g in groups if g["params"]], lr=ADAMW["learningRate"],
                                  betas=(ADAMW["beta1"], ADAMW["beta2"]), eps=ADAMW["epsilon"], foreach=False)
    steps = []
    for _ in range(ADAMW_STEPS):
        before = {n: read_array(t, tr) for n, t, tr in tensors}
        model.zero_grad(set_to_none=True)
        surrogate(model, sequences, terms, 1).backward()
        norm = torch.nn.utils.clip_grad_norm_([t for _, t, _ in tensors], ADAMW["maxGradNorm"], foreach=False)
        optimizer.step()
        steps.append((float(norm), {n: read_array(t, tr) - before[n] for n, t, tr in tensors}))
    return steps


def adamw_record(models, names, sequences, terms, decayed, kind):
    exact, single = (adamw_run(m, names, sequences, terms, decayed) for m in models)
    return dict(kind=kind, steps=[
        dict(gradNorm=dict(fp64=n64, fp32=n32), changes=[array_record(n, d64[n], d32[n]) for n in names])
        for (n64, d64), (n32, d32) in zip(exact, single)])


def agree(what: str, error: float, bound: float) -> None:
    """transformers' own float32 model and the float64 one (with hf_models.py's replacements) must
    agree to float32 noise, else a replacement no longer computes what transformers computes."""
    if not error <= bound:
        raise SystemExit(f"record.py: {what}: float32 and float64 models differ by {error:.2e} > {bound}")


def score_record(models, sequences, temperature):
    exact, single = (scores(m, sequences, temperature) for m in models)
    error = lambda a, b: max(abs(x - y) for row_a, row_b in zip(a, b) for x, y in zip(row_a, row_b))  # noqa: E731
    record = dict(temperature=temperature, fp32MaxAbsError={})
    for key in ("logprobs", "entropies", "values"):
        if exact[key][0] is None:
            continue
        record[key] = dict(fp64=exact[key], fp32=single[key])
        record["fp32MaxAbsError"][key] = error(single[key], exact[key])
        agree(f"{key} at T={temperature}", record["fp32MaxAbsError"][key], 1e-3)
    return record


def record_model(name: str, spec: dict) -> dict:
    started = time.time()
    config, seed = spec["config"], spec["seed"]
    params = parameter_specs(spec)
    arrays = generated(seed, params)
    for p in params:
        p["bitsChecksum"] = bits_checksum(arrays[p["name"]])
    sequences, terms = batch(spec)
    names = [p["name"] for p in params]
    decayed = {p["name"] for p in params if len(p["shape"]) == 2 and not p["name"].startswith("valueHead")}
    base = lambda: (hf_model(config, arrays, torch.float64), hf_model(config, arrays, torch.float32))  # noqa: E731
    models = base()
    out = dict(model=name, config=config, seed=seed, parameters=params, sequences=sequences, **terms,
               adamw=ADAMW, scores=[score_record(models, sequences, t) for t in SCORE_TEMPERATURES],
               gradients=[gradient_record(models, names, sequences, terms, t, "full") for t in spec["gradientTemperatures"]],
               optimizer=[])
    if spec.get("adamw", True):
        out["optimizer"].append(adamw_record(models, names, sequences, terms, decayed, "full"))
    if spec["lora"] is not None:
        adapters = adapter_specs(spec)
        adapter_arrays = generated(seed, adapters)
        for a in adapters:
            a["bitsChecksum"] = bits_checksum(adapter_arrays[a["name"]])
        adapter_names = [a["name"] for a in adapters]
        # The value head trains too (PEFT's modules_to_save), without weight decay; the adapters decay.
        lora_names = adapter_names + [n for n in names if n.startswith("valueHead")]
        models = tuple(peft_model(m, spec["lora"], adapter_arrays) for m in base())
        out["lora"] = dict(spec["lora"], adapters=adapters)
        out["gradients"].append(gradient_record(models, lora_names, sequences, terms, 1, "lora"))
        out["optimizer"].append(adamw_record(models, lora_names, sequences, terms, set(adapter_names), "lora"))
    out["versions"] = dict(torch=torch.__version__, transformers=__import__("transformers").__version__,
                           peft=__import__("peft").__version__, numpy=np.__version__)
    print(f"== {name}: recorded in {time.time() - started:.1f} s", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--full", action="store_true", help="also record SmolLM2-135M's 30 layers")
    args = parser.parse_args()
    torch.manual_seed(0)
    args.out.mkdir(parents=True, exist_ok=True)
    models = dict(MODELS, **(FULL_MODELS if args.full else {}))
    for name, spec in models.items():
        text = json.dumps(record_model(name, spec), separators=(",", ":"))
        (args.out / f"{name}.json").write_text(text + "\n")
        print(f"   {args.out / (name + '.json')}: {len(text) / 1024:.0f} KiB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
