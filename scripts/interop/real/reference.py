"""check:real, Python side. `dequant <file.gguf> <agentrl-dir>`: every tensor dequantized by the `gguf`
package (gguf.quants.dequantize) against agentrl's (index.json + data.bin); exact equality required.
`logits <file.gguf> <agentrl-dir>`: transformers' LlamaForCausalLM loaded from the same GGUF (gguf_file=,
which dequantizes and undoes llama.cpp's q/k permutation itself), float32, logits on agentrl's token ids
against agentrl's logits at every real position; max |diff| <= 1e-3 required. `folders <dir>`: agentrl's tiny Qwen3/Qwen2
folders. `export <dir>`: agentrl's export-hf of SmolLM2 + a merged LoRA, loaded by transformers alone (see export())."""
import json, os, sys
import numpy as np


def dequant(gguf_path, agentrl_dir):
    from gguf import GGUFReader
    from gguf.quants import dequantize
    index = json.load(open(os.path.join(agentrl_dir, "index.json")))
    ours = np.fromfile(os.path.join(agentrl_dir, "data.bin"), dtype=np.float32)
    reader = GGUFReader(gguf_path)
    by_name = {t.name: t for t in reader.tensors}
    assert len(by_name) == len(index), f"{len(by_name)} tensors in the file, agentrl read {len(index)}"
    worst = {}
    for entry in index:
        tensor = by_name[entry["name"]]
        reference = dequantize(tensor.data, tensor.tensor_type).astype(np.float32).reshape(-1)
        mine = ours[entry["offset"]: entry["offset"] + entry["count"]]
        assert reference.shape == mine.shape, f"{entry['name']}: {reference.shape} vs {mine.shape}"
        assert list(reversed([int(d) for d in tensor.shape])) == entry["shape"], f"{entry['name']}: shape {tensor.shape} vs {entry['shape']}"
        diff = float(np.max(np.abs(reference.astype(np.float64) - mine.astype(np.float64)))) if mine.size else 0.0
        same_bits = bool(np.array_equal(reference.view(np.uint32), mine.view(np.uint32)))
        kind = entry["type"]
        count, max_diff, all_same = worst.get(kind, (0, 0.0, True))
        worst[kind] = (count + 1, max(max_diff, diff), all_same and same_bits)
    ok = True
    for kind, (count, max_diff, all_same) in sorted(worst.items()):
        print(f"  {kind:5s} {count:4d} tensors  max |agentrl - gguf| = {max_diff:.3g}  bit-identical: {all_same}")
        ok = ok and max_diff <= 1e-7
    print(f"dequant {os.path.basename(gguf_path)}: {'passed' if ok else 'FAILED'}")
    return ok


def logits(gguf_path, agentrl_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as transformers_logging
    transformers_logging.disable_progress_bar()
    torch.manual_seed(0)
    info = json.load(open(os.path.join(agentrl_dir, "ids.json")))
    ids, T, V = info["ids"], info["seqLen"], info["vocabSize"]
    ours = np.fromfile(os.path.join(agentrl_dir, "logits.bin"), dtype=np.float32).reshape(len(ids), T, V)
    model = AutoModelForCausalLM.from_pretrained(os.path.dirname(gguf_path), gguf_file=os.path.basename(gguf_path), torch_dtype=torch.float32)
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(os.path.dirname(gguf_path), gguf_file=os.path.basename(gguf_path))
    ok = True
    for prompt, row in zip(info["prompts"], ids):
        theirs = tokenizer.encode(prompt, add_special_tokens=False)
        if theirs != row:
            print(f"  tokenizer differs on {prompt!r}: agentrl {row}, transformers {theirs}")
            ok = False
    cases = info.get("tokenizerCases", [])
    differing = [case for case in cases if tokenizer.encode(case["text"], add_special_tokens=False) != case["ids"]]
    for case in differing[:5]:
        print(f"  tokenizer differs on {case['text']!r}: agentrl {case['ids']}, transformers {tokenizer.encode(case['text'], add_special_tokens=False)}")
    ok = ok and not differing
    print(f"  tokenizer (GGUF metadata): agentrl's ids {'equal' if ok else 'DIFFER from'} transformers' on {len(ids)} prompts and {len(cases) - len(differing)}/{len(cases)} strings")
    worst = 0.0
    with torch.no_grad():
        for b, row in enumerate(ids):
            reference = model(torch.tensor([row])).logits[0].numpy()  # [t, V], one prompt at a time: no padding
            diff = float(np.max(np.abs(reference.astype(np.float64) - ours[b, : len(row)].astype(np.float64))))
            scale = float(np.max(np.abs(reference)))
            same_top = bool((reference.argmax(-1) == ours[b, : len(row)].argmax(-1)).all())
            print(f"  prompt {b}: {len(row):2d} tokens  max |agentrl - transformers| = {diff:.3g} (logits up to {scale:.1f})  same argmax: {same_top}")
            worst = max(worst, diff)
            ok = ok and diff <= 1e-3
    ok = ok and worst <= 1e-3
    print(f"logits {type(model).__name__} (transformers, float32): max |diff| {worst:.3g}: {'passed' if ok else 'FAILED'} (bound 1e-3)")
    return ok


def folders(out):
    import torch
    from transformers import AutoModelForCausalLM
    ok = True
    for name in sorted(os.listdir(out)):
        folder = os.path.join(out, name)
        ids = json.load(open(os.path.join(folder, "agentrl-ids.json")))["ids"]
        ours = np.fromfile(os.path.join(folder, "agentrl-logits.bin"), dtype=np.float32).reshape(len(ids), -1)
        model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32)
        model.eval()
        with torch.no_grad():
            reference = model(torch.tensor([ids])).logits[0].numpy()
        diff = float(np.max(np.abs(reference.astype(np.float64) - ours.astype(np.float64))))
        print(f"  {name}: {type(model).__name__} from agentrl's folder, {len(ids)} tokens  max |agentrl - transformers| = {diff:.3g} (logits up to {float(np.max(np.abs(reference))):.1f})")
        ok = ok and diff <= 1e-3
    print(f"tiny folders: {'passed' if ok else 'FAILED'} (bound 1e-3)")
    return ok


def export(out):
    """`agentrl export-hf` of SmolLM2 + a merged LoRA (out/hf), loaded by transformers alone: (a) logits vs agentrl's
    merged model, (b) tokenizer ids, (c) apply_chat_template with tools vs agentrl's render, (d) generation_config.json."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig
    folder = os.path.join(out, "hf")
    info = json.load(open(os.path.join(out, "agentrl.json")))
    ids, T, V = info["ids"], info["seqLen"], info["vocabSize"]
    ours = np.fromfile(os.path.join(out, "logits.bin"), dtype=np.float32).reshape(len(ids), T, V)
    model, loading = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32, output_loading_info=True)
    model.eval()
    surprises = {key: value for key, value in loading.items() if value}
    worst = 0.0
    with torch.no_grad():
        for row, mine in zip(ids, ours):
            reference = model(torch.tensor([row])).logits[0].numpy()  # [t, V], one prompt at a time: no padding
            worst = max(worst, float(np.max(np.abs(reference.astype(np.float64) - mine[: len(row)].astype(np.float64)))))
    logits_ok = worst <= 1e-3 and not surprises
    print(f"  export (a) logits: {type(model).__name__}.from_pretrained(export) on {len(ids)} prompts  max |agentrl merged - transformers| = {worst:.3g}"
          f"{'' if not surprises else f'  loading reported {surprises}'}: {'passed' if logits_ok else 'FAILED'} (bound 1e-3)")

    tokenizer = AutoTokenizer.from_pretrained(folder)
    cases = info["tokenizerCases"] + [{"text": p, "ids": r} for p, r in zip(info["prompts"], ids)]
    differing = [case for case in cases if tokenizer.encode(case["text"], add_special_tokens=False) != case["ids"]]
    for case in differing[:5]:
        print(f"    tokenizer differs on {case['text']!r}: agentrl {case['ids']}, transformers {tokenizer.encode(case['text'], add_special_tokens=False)}")
    tokenizer_ok = not differing and len(cases) >= 50
    print(f"  export (b) tokenizer: {type(tokenizer).__name__}.from_pretrained(export) ids equal agentrl's on {len(cases) - len(differing)}/{len(cases)} strings"
          f" (special tokens included): {'passed' if tokenizer_ok else 'FAILED'}")

    chats_ok = True
    for i, chat in enumerate(info["chats"]):
        theirs = list(tokenizer.apply_chat_template(chat["messages"], tools=chat["tools"], tokenize=True, add_generation_prompt=chat["addGenerationPrompt"]))
        if theirs != chat["ids"]:
            chats_ok = False
            print(f"    chat {i} differs:\n      agentrl      {tokenizer.decode(chat['ids'])!r}\n      transformers {tokenizer.decode(theirs)!r}")
    roles = [m["role"] for m in info["chats"][0]["messages"]]
    print(f"  export (c) chat template: apply_chat_template(tools=[{', '.join(t['function']['name'] for t in info['chats'][0]['tools'])}]) on {len(info['chats'])} conversations"
          f" ({', '.join(roles)}) equals agentrl's render token for token ({', '.join(str(len(c['ids'])) for c in info['chats'])} tokens): {'passed' if chats_ok else 'FAILED'}")

    generation = GenerationConfig.from_pretrained(folder)
    eos = generation.eos_token_id if isinstance(generation.eos_token_id, list) else [generation.eos_token_id]
    generation_ok = None not in eos and set(eos) <= set(info["stopTokens"])
    print(f"  export (d) generation_config.json: GenerationConfig.from_pretrained loads it (eos {eos}, bos {generation.bos_token_id}, pad {generation.pad_token_id};"
          f" agentrl stops at {info['stopTokens']}): {'passed' if generation_ok else 'FAILED'}")
    ok = logits_ok and tokenizer_ok and chats_ok and generation_ok
    print(f"export-hf of SmolLM2 + merged LoRA, loaded by transformers: {'passed' if ok else 'FAILED'}")
    return ok


if __name__ == "__main__":
    sys.exit(0 if {"dequant": dequant, "logits": logits, "folders": folders, "export": export}[sys.argv[1]](*sys.argv[2:]) else 1)
