"""check:lora, the Python side: PEFT loads agentrl's adapter onto agentrl's exported base, and
transformers loads agentrl's merged export; both give agentrl's LoRA logits to <= 1e-4."""
import json
import sys
from pathlib import Path

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM

TOLERANCE = 1e-4
folder = Path(sys.argv[1])
expected = json.loads((folder / "expected.json").read_text())
tokens = torch.tensor(expected["tokens"])
want = torch.tensor(expected["logits"], dtype=torch.float32).reshape(expected["shape"])

base = AutoModelForCausalLM.from_pretrained(folder / "base", torch_dtype=torch.float32)
peft_model = PeftModel.from_pretrained(base, folder / "adapter")
peft_model.eval()
loaded = sum(1 for name, _ in peft_model.named_parameters() if "lora_" in name)
merged = AutoModelForCausalLM.from_pretrained(folder / "merged", torch_dtype=torch.float32)
merged.eval()

failed = False
with torch.no_grad():
    for label, model in (("PeftModel(base, adapter)", peft_model), ("export-hf of the merged weights", merged)):
        got = model(input_ids=tokens).logits
        diff = (got - want).abs().max().item()
        ok = diff <= TOLERANCE
        failed |= not ok
        print(f"{label}: max |logits - agentrl's LoRA forward| = {diff:.3e} ({'ok' if ok else 'FAIL'}, tolerance {TOLERANCE})")
    with peft_model.disable_adapter():
        plain = peft_model(input_ids=tokens).logits
    moved = (plain - want).abs().max().item()
    print(f"{loaded} LoRA tensors loaded; the base alone differs from agentrl's LoRA forward by {moved:.3e} (the adapters matter)")
    if moved <= TOLERANCE:
        failed = True
        print("FAIL: the adapters do not change the logits, so the check proves nothing")
sys.exit(1 if failed else 0)
