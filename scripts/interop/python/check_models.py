"""check:python, models — agentrl's export-hf folders in PyTorch transformers.

    python check_models.py <fixtures-dir>      (written by write-fixtures.ts)

1. AutoModelForCausalLM loads each exported folder (Llama: tied, GQA; Qwen2: q/k/v biases, untied
   head) and its logits equal agentrl's own forward within 1e-4 at lengths up to 512 (max |diff|
   printed per length); its log-probs of the sequence equal agentrl's jitted score().
2. generate() with the exported generation_config never samples an id past the tokenizer's
   vocabulary; with suppress_tokens removed it does (so the check can fail).
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

TOLERANCE = 1e-4


def main() -> int:
    root = Path(sys.argv[1])
    torch.manual_seed(0)
    failures = []
    passed = 0
    for name in ["llama", "qwen2"]:
        meta = json.loads((root / f"{name}.logits.json").read_text())
        flat = np.fromfile(root / f"{name}.logits.f32", dtype="<f4")
        vocab = meta["vocabSize"]
        model = AutoModelForCausalLM.from_pretrained(root / name, dtype=torch.float32)
        model.eval()
        print(f"== {name}: {type(model).__name__}, {sum(p.numel() for p in model.parameters()):,} parameters")
        print(f"   {'length':>6}  {'max |logit diff|':>16}  {'max |logprob diff| vs score()':>30}")
        for sequence, score in zip(meta["sequences"], meta["scoreLogprobs"]):
            ids = sequence["ids"]
            length = len(ids)
            ours = flat[sequence["offset"]: sequence["offset"] + length * vocab].reshape(length, vocab)
            with torch.no_grad():
                logits = model(torch.tensor([ids])).logits[0].double().numpy()
            logit_diff = float(np.abs(logits - ours).max())
            logprobs = torch.log_softmax(torch.tensor(logits), dim=-1).numpy()
            theirs = [0.0] + [float(logprobs[t - 1, ids[t]]) for t in range(1, length)]
            score_diff = float(np.abs(np.array(theirs) - np.array(score)).max())
            print(f"   {length:>6}  {logit_diff:>16.3e}  {score_diff:>30.3e}")
            for what, diff in [("logits", logit_diff), ("score log-probs", score_diff)]:
                if diff <= TOLERANCE:
                    passed += 1
                else:
                    failures.append(f"{name} {what} at length {length}: max |diff| {diff:.3e} > {TOLERANCE}")

    # generate() and the spare ids
    folder = root / "llama"
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    generation = GenerationConfig.from_pretrained(folder)
    real = len(tokenizer)
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Pick an arm: A or B."}], add_generation_prompt=True, return_tensors="pt")
    if hasattr(prompt, "input_ids"):
        prompt = prompt["input_ids"]

    def spare_count(config):
        torch.manual_seed(1)
        with torch.no_grad():
            output = model.generate(prompt, generation_config=config, max_new_tokens=48, num_return_sequences=32, min_new_tokens=48)
        new = output[:, prompt.shape[1]:]
        return int((new >= real).sum()), new.numel()

    spare, total = spare_count(generation)
    print(f"== generate: {total} sampled tokens with the exported generation_config: {spare} ids >= {real} (suppress_tokens {generation.suppress_tokens[0]}..{generation.suppress_tokens[-1]})")
    if spare == 0:
        passed += 1
    else:
        failures.append(f"generate sampled {spare} ids past the vocabulary")
    # generate() fills a passed config's unset fields from model.generation_config: clear it there too.
    unsuppressed = GenerationConfig.from_pretrained(folder)
    unsuppressed.suppress_tokens = None
    model.generation_config.suppress_tokens = None
    control, _ = spare_count(unsuppressed)
    print(f"   control, suppress_tokens removed: {control} ids >= {real}")
    if control > 0:
        passed += 1
    else:
        failures.append("control: without suppress_tokens no spare id was sampled, so the check proves nothing")

    for failure in failures:
        print("FAIL", failure)
    print(f"check_models: {passed} passed, {len(failures)} failed")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
