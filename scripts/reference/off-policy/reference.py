"""PyTorch reference values for agentrl's off-policy corrections and CISPO (float64, CPU).

Writes one JSON fixture: seeded ragged inputs (behaviour, trainer and current log-probs, advantages,
loss masks) and, computed here with torch the way the peers write them, the outputs agentrl must match:

- corrections: verl `compute_rollout_importance_weights` (verl/trainer/ppo/mismatch_helper.py), level
  "token" + mode "truncate" (TIS), level "token" + mode "mask" (MIS token), level "sequence" / "geometric"
  + mode "mask" (MIS sequence): the per-token weights, the rejection mask, and the mismatch metrics
  (TRL's sampling_logp_difference max / mean, the shares truncated / masked, the mean weight kept).
- cispo: MiniMax-M1 eq. 4 as SkyRL / ART write it, loss = -sg(clamp(r, 1-eps_low, 1+eps_high)) * A * logp,
  aggregated four ways; the loss and its autograd gradient with respect to the current log-probs.
- weighted: PPO-clip (dual clip c = 3) and CISPO between current and trainer log-probs with each token's
  loss times the (constant) correction weight, aggregated over the corrected mask: loss and gradient.

Usage: python reference.py OUT.json   (scripts/reference/off-policy/run.sh sets up the pinned venv)
"""

import json
import sys

import torch

torch.set_default_dtype(torch.float64)
SAFETY_BOUND = 20.0
LENGTHS = [7, 4, 9, 5, 6]
# Per-sequence drift between behaviour and trainer log-probs: small (kept), large (rejected) and between.
DRIFT = [0.05, 0.9, 0.15, 0.6, 0.3]
CONFIG = {"cap": 2.0, "low": 0.5, "high": 2.0}
GEOMETRIC = {"low": 0.95, "high": 1.05}
SCALE_FACTOR = 12.0


def ragged(rows):
    return [[float(x) for x in row] for row in rows]


def pad(rows):
    width = max(len(r) for r in rows)
    out = torch.zeros(len(rows), width)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r)
    return out


def unpad(tensor, lengths):
    return [tensor[i, :n].tolist() for i, n in enumerate(lengths)]


def make_inputs():
    g = torch.Generator().manual_seed(2026)
    mask, behaviour, trainer, current, advantages = [], [], [], [], []
    for n, drift in zip(LENGTHS, DRIFT):
        m = (torch.rand(n, generator=g) < 0.75).double()
        m[0] = 0.0
        m[-1] = 1.0
        b = -3.0 * torch.rand(n, generator=g)
        t = b + drift * torch.randn(n, generator=g)
        c = t + 0.3 * torch.randn(n, generator=g)
        a = torch.randn(n, generator=g)
        mask.append(m.tolist())
        behaviour.append(b.tolist())
        trainer.append(t.tolist())
        current.append(c.tolist())
        advantages.append(a.tolist())
    return {
        "lossMask": mask,
        "behaviourLogprobs": behaviour,
        "trainerLogprobs": trainer,
        "currentLogprobs": current,
        "advantages": advantages,
    }


def masked_sum(x, m, dim=None):
    return (x * m).sum() if dim is None else (x * m).sum(dim)


def correction(method, behaviour, trainer, mask, low, high, cap, sequence_ratio="product"):
    """verl mismatch_helper: log ratio, ±20 safety bound, then truncate or mask."""
    log_ratio = (trainer - behaviour) * mask
    if method in ("tis", "mis-token"):
        weights = torch.exp(torch.clamp(log_ratio, -SAFETY_BOUND, SAFETY_BOUND))
    else:
        per_sequence = masked_sum(log_ratio, mask, -1)
        if sequence_ratio == "geometric":
            per_sequence = per_sequence / mask.sum(-1).clamp(min=1.0)
        weights = torch.exp(torch.clamp(per_sequence, -SAFETY_BOUND, SAFETY_BOUND)).unsqueeze(-1).expand_as(mask)
    truncated = torch.zeros_like(mask)
    if method == "tis":
        truncated = (weights > cap).double() * mask
        weights = weights.clamp(max=cap)
        kept = mask.clone()
    else:
        kept = mask * ((weights >= low) & (weights <= high)).double()
    weights = weights * mask
    tokens = mask.sum()
    delta = (trainer - behaviour).abs() * mask
    metrics = {
        "maxAbsLogprobDelta": delta.max().item(),
        "meanAbsLogprobDelta": (delta.sum() / tokens).item(),
        "truncatedFraction": (truncated.sum() / tokens).item(),
        "maskedFraction": ((mask - kept).sum() / tokens).item(),
        "weightMean": (masked_sum(weights, kept) / kept.sum()).item() if kept.sum() > 0 else 0.0,
    }
    return weights, kept, metrics


def aggregate(token_losses, mask, mode):
    counts = mask.sum(-1)
    with_tokens = (counts > 0).double()
    sequences = with_tokens.sum()
    if mode == "token-mean":
        return masked_sum(token_losses, mask) / mask.sum()
    if mode == "seq-mean-token-mean":
        per = masked_sum(token_losses, mask, -1) / counts.clamp(min=1.0)
        return (per * with_tokens).sum() / sequences
    if mode == "seq-mean-token-sum":
        return (masked_sum(token_losses, mask, -1) * with_tokens).sum() / sequences
    if mode == "seq-mean-token-sum-norm":
        return masked_sum(token_losses, mask) / SCALE_FACTOR
    raise ValueError(mode)


def ratio_of(logp, old):
    return torch.exp(torch.clamp(logp - old, -SAFETY_BOUND, SAFETY_BOUND))


def cispo_token_losses(logp, old, advantages, eps_low, eps_high):
    clipped = torch.clamp(ratio_of(logp, old), 1 - eps_low, 1 + eps_high).detach()
    return -clipped * advantages * logp


def ppo_token_losses(logp, old, advantages, eps_low=0.2, eps_high=0.2, clip_c=3.0):
    ratio = ratio_of(logp, old)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1 - eps_low, 1 + eps_high)
    loss = torch.maximum(unclipped, clipped)
    return torch.where(advantages < 0, torch.minimum(loss, -advantages * clip_c), loss)


def loss_and_gradient(token_losses_of, current, mask, mode, weights=None):
    logp = current.clone().requires_grad_(True)
    token_losses = token_losses_of(logp)
    if weights is not None:
        token_losses = token_losses * weights.detach()
    loss = aggregate(token_losses, mask, mode)
    loss.backward()
    return loss.item(), logp.grad


def main(out_path):
    inputs = make_inputs()
    lengths = LENGTHS
    mask, behaviour = pad(inputs["lossMask"]), pad(inputs["behaviourLogprobs"])
    trainer, current, advantages = pad(inputs["trainerLogprobs"]), pad(inputs["currentLogprobs"]), pad(inputs["advantages"])
    cases = {
        "tis": ("tis", CONFIG, "product"),
        "mis-token": ("mis-token", CONFIG, "product"),
        "mis-sequence": ("mis-sequence", CONFIG, "product"),
        "mis-sequence-geometric": ("mis-sequence", {**CONFIG, **GEOMETRIC}, "geometric"),
    }
    corrections, weighted = {}, {}
    for name, (method, cfg, sequence_ratio) in cases.items():
        w, kept, metrics = correction(method, behaviour, trainer, mask, cfg["low"], cfg["high"], cfg["cap"], sequence_ratio)
        corrections[name] = {
            "method": method,
            "options": {**cfg, "sequenceRatio": sequence_ratio},
            "weights": unpad(w, lengths),
            "lossMask": unpad(kept, lengths),
            "metrics": metrics,
        }
        if kept.sum() == 0:
            continue
        ppo = loss_and_gradient(lambda x: ppo_token_losses(x, trainer, advantages), current, kept, "token-mean", w)
        cispo = loss_and_gradient(lambda x: cispo_token_losses(x, trainer, advantages, 1.0, 4.0), current, kept, "token-mean", w)
        weighted[name] = {
            "ppo-clip": {"loss": ppo[0], "gradLogprobs": unpad(ppo[1], lengths)},
            "cispo": {"loss": cispo[0], "gradLogprobs": unpad(cispo[1], lengths)},
        }
    cispo = []
    # Old log-probs here are the behaviour ones: ratios up to e^±2, so both bounds clip somewhere.
    for eps_low, eps_high in [(0.2, 0.28), (1.0, 4.0), (0.0, 0.0)]:
        for mode in ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm"]:
            losses_of = lambda x: cispo_token_losses(x, behaviour, advantages, eps_low, eps_high)  # noqa: E731
            loss, grad = loss_and_gradient(losses_of, current, mask, mode)
            ratio = ratio_of(current, behaviour)
            clipped = ((ratio < 1 - eps_low) | (ratio > 1 + eps_high)).double() * mask
            cispo.append({
                "clipRatioLow": eps_low,
                "clipRatioHigh": eps_high,
                "lossAggMode": mode,
                "lossScaleFactor": SCALE_FACTOR,
                "loss": loss,
                "gradLogprobs": unpad(grad, lengths),
                "clipfrac": (clipped.sum() / mask.sum()).item(),
            })
    fixture = {
        "generatedBy": "scripts/reference/off-policy/reference.py (torch " + torch.__version__ + ", float64, CPU)",
        "inputs": {k: ragged(v) for k, v in inputs.items()},
        "corrections": corrections,
        "weighted": weighted,
        "cispo": cispo,
    }
    with open(out_path, "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    print(f"wrote {out_path}: {len(corrections)} corrections, {len(weighted)} weighted losses, {len(cispo)} CISPO cases")
    for name, c in corrections.items():
        print(f"  {name}: {c['metrics']}")


if __name__ == "__main__":
    main(sys.argv[1])
