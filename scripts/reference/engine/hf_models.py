"""transformers / PEFT models holding the generated weights (weights.py), and agentrl's parameter
names mapped onto them (the mapping of src/model/hf-config.ts: Linear weights are HF [out, in],
agentrl [in, out]; LoRA A is PEFT lora_A.weight [r, in] transposed, B is lora_B.weight [out, r]
transposed).

float32 is the model as transformers runs it (SDPA attention, its float32 rotary tables). float64
is the exact reference: transformers computes three things in float32 whatever the model's dtype
(LlamaRMSNorm/Qwen2RMSNorm upcast to float32 and back, the rotary tables in float32, eager
attention's softmax in float32), so the float64 model has those replaced by float64 versions of
the same formulas (RMSNorm: x / sqrt(mean(x^2) + eps) * w; RoPE, Su et al. 2021: angle = p * theta^(-2i/hd),
half-split rotate_half) and attends through SDPA, which keeps the dtype.
"""

import types

import numpy as np
import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

from weights import uniform_array

LINEAR_MODULES = {
    "wq": "self_attn.q_proj",
    "wk": "self_attn.k_proj",
    "wv": "self_attn.v_proj",
    "wo": "self_attn.o_proj",
    "wGate": "mlp.gate_proj",
    "wUp": "mlp.up_proj",
    "wDown": "mlp.down_proj",
}
BIASES = {"bq": "self_attn.q_proj", "bk": "self_attn.k_proj", "bv": "self_attn.v_proj"}
NORMS = {"attnNorm": "input_layernorm", "mlpNorm": "post_attention_layernorm"}
PEFT_MODULES = {"wq": "q_proj", "wk": "k_proj", "wv": "v_proj", "wo": "o_proj", "wGate": "gate_proj", "wUp": "up_proj", "wDown": "down_proj"}


def head_dim(config: dict) -> int:
    return config["hiddenSize"] // config["numHeads"]


def parameter_shapes(config: dict) -> list[tuple[str, list[int]]]:
    """agentrl's parameterShapes (src/model/config.ts), in its canonical order."""
    d, hd, f, v = config["hiddenSize"], head_dim(config), config["intermediateSize"], config["vocabSize"]
    h, kv = config["numHeads"], config["numKvHeads"]
    shapes = [("embed", [v, d])]
    for i in range(config["numLayers"]):
        p = f"layers.{i}."
        shapes += [(p + "attnNorm", [d]), (p + "wq", [d, h * hd]), (p + "wk", [d, kv * hd]), (p + "wv", [d, kv * hd])]
        if config["attentionBias"]:
            shapes += [(p + "bq", [h * hd]), (p + "bk", [kv * hd]), (p + "bv", [kv * hd])]
        shapes += [(p + "wo", [h * hd, d]), (p + "mlpNorm", [d]), (p + "wGate", [d, f]), (p + "wUp", [d, f]), (p + "wDown", [f, d])]
    shapes.append(("finalNorm", [d]))
    if not config["tieWordEmbeddings"]:
        shapes.append(("lmHead", [d, v]))
    if config.get("valueHead"):
        shapes += [("valueHead.w", [d, 1]), ("valueHead.b", [1])]
    return shapes


def lora_shapes(config: dict, rank: int) -> list[tuple[str, list[int]]]:
    """agentrl's loraShapes (src/model/lora.ts) for all seven projections."""
    base = dict(parameter_shapes(config))
    shapes = []
    for i in range(config["numLayers"]):
        for weight in PEFT_MODULES:
            inputs, outputs = base[f"layers.{i}.{weight}"]
            shapes += [(f"layers.{i}.{weight}.loraA", [inputs, rank]), (f"layers.{i}.{weight}.loraB", [rank, outputs])]
    return shapes


def generated(seed: int, specs: list[dict]) -> dict[str, np.ndarray]:
    """The arrays of `specs` ({name, shape, stream, scale, offset}), agentrl layout."""
    return {s["name"]: uniform_array(seed, s["stream"], s["shape"], s["scale"], s["offset"]) for s in specs}


def causal_lm(model):
    """The LlamaForCausalLM / Qwen2ForCausalLM inside a PEFT wrapper (or the model itself)."""
    return model.base_model.model if hasattr(model, "peft_config") else model


def _linear(module):
    return getattr(module, "base_layer", module)


def _value_head(lm):
    """The value head's Linear: under PEFT with modules_to_save=["v_head"], the trained copy."""
    head = lm.v_head
    return head.modules_to_save["default"] if hasattr(head, "modules_to_save") else head


def tensor_of(model, name: str) -> tuple[torch.Tensor, bool]:
    """The torch parameter holding agentrl's `name`, and whether agentrl's layout is its transpose."""
    lm = causal_lm(model)
    if name == "embed":
        return lm.model.embed_tokens.weight, False
    if name == "finalNorm":
        return lm.model.norm.weight, False
    if name == "lmHead":
        return lm.lm_head.weight, True
    if name == "valueHead.w":
        return _value_head(lm).weight, True
    if name == "valueHead.b":
        return _value_head(lm).bias, False
    _, index, leaf, *adapter = name.split(".")
    layer = lm.model.layers[int(index)]
    if leaf in NORMS:
        return layer.get_submodule(NORMS[leaf]).weight, False
    if leaf in BIASES:
        return _linear(layer.get_submodule(BIASES[leaf])).bias, False
    module = layer.get_submodule(LINEAR_MODULES[leaf])
    if adapter == ["loraA"]:
        return module.lora_A["default"].weight, True
    if adapter == ["loraB"]:
        return module.lora_B["default"].weight, True
    return _linear(module).weight, True


def set_arrays(model, arrays: dict[str, np.ndarray]) -> None:
    with torch.no_grad():
        for name, value in arrays.items():
            tensor, transposed = tensor_of(model, name)
            source = torch.from_numpy(np.ascontiguousarray(value.T if transposed else value))
            tensor.copy_(source.to(tensor.dtype))


def read_array(tensor: torch.Tensor, transposed: bool) -> np.ndarray:
    """A torch tensor (or its gradient) back in agentrl's layout, as float64."""
    value = tensor.detach().to(torch.float64).numpy()
    return value.T.copy() if transposed else value.copy()


def _exact_rms_norm(self, hidden_states):
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))


class ExactRotary(torch.nn.Module):
    """RoPE tables in the model's dtype from float64 angles (transformers forces float32)."""

    def __init__(self, dim: int, theta: float):
        super().__init__()
        self.inv_freq64 = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))

    def forward(self, x, position_ids):
        freqs = position_ids[..., None].to(torch.float64) * self.inv_freq64  # [B, T, hd/2]
        angles = torch.cat((freqs, freqs), dim=-1)  # [B, T, hd]
        return angles.cos().to(x.dtype), angles.sin().to(x.dtype)


def hf_model(config: dict, arrays: dict[str, np.ndarray], dtype: torch.dtype):
    """The transformers model of agentrl `config` holding `arrays`, in `dtype` (float64: exact, see above)."""
    common = dict(
        vocab_size=config["vocabSize"],
        hidden_size=config["hiddenSize"],
        intermediate_size=config["intermediateSize"],
        num_hidden_layers=config["numLayers"],
        num_attention_heads=config["numHeads"],
        num_key_value_heads=config["numKvHeads"],
        max_position_embeddings=config["maxSeqLen"],
        rope_theta=config["ropeTheta"],
        rms_norm_eps=config["rmsNormEps"],
        tie_word_embeddings=config["tieWordEmbeddings"],
        hidden_act="silu",
        attention_dropout=0.0,
        attn_implementation="sdpa",
    )
    if config["attentionBias"]:
        model = Qwen2ForCausalLM(Qwen2Config(**common, use_sliding_window=False))
    else:
        model = LlamaForCausalLM(LlamaConfig(**common, attention_bias=False, mlp_bias=False, head_dim=head_dim(config)))
    if config.get("valueHead"):
        model.v_head = torch.nn.Linear(config["hiddenSize"], 1)  # TRL's value head (v_head.summary) on the normed final state
    model = model.to(dtype).eval()
    if dtype == torch.float64:
        for module in model.modules():
            if type(module).__name__.endswith("RMSNorm"):
                module.forward = types.MethodType(_exact_rms_norm, module)
        model.model.rotary_emb = ExactRotary(head_dim(config), config["ropeTheta"])
    set_arrays(model, arrays)
    return model


def peft_model(model, lora: dict, adapters: dict[str, np.ndarray]):
    """PEFT LoRA on all seven projections (scale alpha / r, no dropout) holding the generated adapters;
    a value head trains as PEFT users train it for PPO: modules_to_save=["v_head"] (a trained copy)."""
    peft_config = LoraConfig(
        r=lora["rank"], lora_alpha=lora["alpha"], lora_dropout=0.0, target_modules=list(PEFT_MODULES.values()), bias="none",
        modules_to_save=["v_head"] if hasattr(model, "v_head") else None,
    )
    wrapped = get_peft_model(model, peft_config)
    dtype = next(model.parameters()).dtype
    for module in wrapped.modules():
        if hasattr(module, "lora_A"):
            module.to(dtype)
    set_arrays(wrapped, adapters)
    return wrapped
