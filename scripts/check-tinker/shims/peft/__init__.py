"""A stand-in for `peft` in the check's slim venv (run.sh copies it into site-packages).

skyrl 0.3.0 imports peft in skyrl/tx/utils/models.py for one thing: `save_lora_checkpoint` (the
sampler weights of save_weights_for_sampler) writes `peft.LoraConfig(...).save_pretrained(dir)`,
an adapter_config.json next to adapter_model.safetensors, which the server never reads back.
The real peft imports torch (with its CUDA wheels, ~5 GB); this writes the same file's LoRA
fields with the standard library.
"""

import json
import os

__version__ = "0.0.0+agentrl-check-shim"


class LoraConfig:
    def __init__(self, base_model_name_or_path=None, r=8, lora_alpha=8, **fields):
        self.fields = {
            "peft_type": "LORA",
            "task_type": fields.pop("task_type", None),
            "base_model_name_or_path": base_model_name_or_path,
            "r": r,
            "lora_alpha": lora_alpha,
            "lora_dropout": 0.0,
            "bias": "none",
            "target_modules": None,
            "inference_mode": False,
            **fields,
        }

    def to_dict(self):
        return dict(self.fields)

    def save_pretrained(self, save_directory, **_):
        os.makedirs(save_directory, exist_ok=True)
        with open(os.path.join(save_directory, "adapter_config.json"), "w") as file:
            json.dump(self.fields, file, indent=2, sort_keys=True)
