"""Task-design probe's sampler (bench/real/probe.sh): SmolLM2-135M-Instruct from its GGUF through
transformers (torch CPU, float32), driven over stdin/stdout by bench/real/probe.ts. Not the product
path: a fast way to measure the base model's success on candidate task variants.

Each stdin line: {"prompts": [[ids…], …], "temperature": t, "top_p": p, "max_new_tokens": n,
"seed": s, "stop": [ids…]}. Each stdout line: {"replies": [[ids…], …]} — the generated ids up to and
including the first stop id. Prompts are left-padded into one batch."""
import json
import os
import sys

import torch
from transformers import AutoModelForCausalLM


def main(gguf_path: str) -> None:
    torch.set_num_threads(int(os.environ.get("PROBE_THREADS", "2")))
    model = AutoModelForCausalLM.from_pretrained(os.path.dirname(gguf_path), gguf_file=os.path.basename(gguf_path), torch_dtype=torch.float32)
    model.eval()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"replies": generate(model, request)}), flush=True)


def generate(model, request) -> list:
    prompts, stop = request["prompts"], request["stop"]
    pad = stop[0]
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    torch.manual_seed(request["seed"])
    sampling = request["temperature"] > 0
    with torch.no_grad():
        out = model.generate(
            input_ids=ids,
            attention_mask=mask,
            max_new_tokens=request["max_new_tokens"],
            do_sample=sampling,
            temperature=request["temperature"] if sampling else None,
            top_p=request["top_p"] if sampling else None,
            top_k=0 if sampling else None,
            eos_token_id=stop,
            pad_token_id=pad,
        )
    replies = []
    for row in out[:, width:].tolist():
        cut = next((i for i, token in enumerate(row) if token in stop), None)
        replies.append(row if cut is None else row[: cut + 1])
    return replies


if __name__ == "__main__":
    main(sys.argv[1])
