"""What bench:engine's PyTorch peers share (engine_torch.py, engine_score_torch.py,
engine_train_torch.py): the one JSON argument, torch's thread count, timing loops, the
transformers Llama of SmolLM2-135M's shape, and the Measurement line each prints.

Imports only torch at load, so engine_torch.py also runs under Debian's python3-torch (no
transformers); transformers is imported by `llama` alone.
"""
import json, resource, sys, time
import torch


def peer_args() -> dict:
    """The JSON argument bench/engine-spawn.ts's runPythonChild passes; sets torch's threads to its `threads`."""
    args = json.loads(sys.argv[1])
    torch.set_num_threads(args["threads"])
    return args


def best_seconds(fn, reps: int) -> float:
    """The fastest of `reps` calls of fn (no warm-up: the caller runs its own first)."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def median_seconds(fn, reps: int) -> float:
    """The median of `reps` calls of fn (the upper one of an even count; no warm-up)."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def llama(args: dict):
    """transformers' LlamaForCausalLM in float32 with sdpa attention: the weights of `weights_dir` (a
    Hugging Face folder) when given, else random ones (seed 0) of `shape` with a tied head. Seeds
    torch with 0 first either way, so what the caller draws next (LoRA adapters, data) is the same."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    if args.get("weights_dir"):
        return LlamaForCausalLM.from_pretrained(args["weights_dir"], dtype=torch.float32, attn_implementation="sdpa")
    shape = args["shape"]
    config = LlamaConfig(
        vocab_size=shape["vocab"], hidden_size=shape["hidden"], intermediate_size=shape["intermediate"],
        num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"], num_key_value_heads=shape["kv_heads"],
        max_position_embeddings=shape["context"], rope_theta=shape["rope_theta"], rms_norm_eps=shape["rms_eps"],
        tie_word_embeddings=True, attn_implementation="sdpa",
    )
    return LlamaForCausalLM(config)


def print_measurement(system: str, figures: dict, note: str, threads: str | None = None) -> None:
    """One JSON line, a Measurement (bench/engine-spawn.ts): the figures, this process's peak RSS and
    torch's thread count (or `threads` as given)."""
    print(json.dumps({
        "system": system,
        "threads": threads if threads is not None else str(torch.get_num_threads()),
        "figures": figures,
        "peakRssMb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "note": note,
    }))
