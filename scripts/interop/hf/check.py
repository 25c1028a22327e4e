"""check:hf — transformers reads agentrl's export-hf folder and agrees with agentrl token for token.

    python check.py <fixtures-dir>      (written by write-fixtures.ts)

1. AutoTokenizer loads the folder; encode of plain text equals agentrl's encode (text holding
   special-token text: with split_special_tokens=True, since agentrl never parses it from text);
   decode, with and without skip_special_tokens, equals agentrl's decode.
2. apply_chat_template(messages, tools=…, add_generation_prompt=…) with the exported Jinja
   template gives exactly agentrl's ids for every conversation (serve-policy's rendering).
3. generation_config.json suppresses the ids past the tokenizer's vocabulary.
"""

import json
import sys
from pathlib import Path

from transformers import AutoConfig, AutoTokenizer, GenerationConfig


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def main() -> int:
    root = Path(sys.argv[1])
    fixtures = json.loads((root / "cases.json").read_text())
    model_dir = root / "model"
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    special_texts = [tokenizer.convert_ids_to_tokens(i) for i in fixtures["tokenizer"]["specialTokens"].values()]
    passed = 0
    failures = []

    def check(name, ok, detail=""):
        nonlocal passed
        if ok:
            passed += 1
        else:
            failures.append(f"{name}: {detail}")

    # 1. tokenizer
    check("special token ids", {k: tokenizer.convert_tokens_to_ids(t) for k, t in zip(fixtures["tokenizer"]["specialTokens"], special_texts)} == fixtures["tokenizer"]["specialTokens"], str(special_texts))
    check("eos is <|end|>", tokenizer.eos_token_id == fixtures["tokenizer"]["specialTokens"]["end"], str(tokenizer.eos_token_id))
    check("len(tokenizer) is the real vocabulary", len(tokenizer) == fixtures["tokenizer"]["vocabSize"], str(len(tokenizer)))
    for case in fixtures["encode"]:
        text, expected = case["text"], case["ids"]
        split = tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
        check(f"encode(split_special_tokens) {text!r}", split == expected, f"{split} != {expected}")
        if not any(special in text for special in special_texts):
            plain = tokenizer.encode(text, add_special_tokens=False)
            check(f"encode {text!r}", plain == expected, f"{plain} != {expected}")
    for case in fixtures["decode"]:
        ids = case["ids"]
        text = tokenizer.decode(ids)
        check(f"decode {ids}", text == case["text"], f"{text!r} != {case['text']!r}")
        skipped = tokenizer.decode(ids, skip_special_tokens=True)
        check(f"decode(skip_special_tokens) {ids}", skipped == case["textSkippingSpecial"], f"{skipped!r} != {case['textSkippingSpecial']!r}")

    # 2. chat template
    chat_failures = 0
    for case in fixtures["chats"]:
        agentrl = case["agentrl"]
        if "error" in agentrl:
            check(f"chat {case['name']}", False, f"agentrl could not render it: {agentrl['error']}")
            chat_failures += 1
            continue
        kwargs = {"add_generation_prompt": case["addGenerationPrompt"]}
        if "tools" in case:
            kwargs["tools"] = case["tools"]
        ids = tokenizer.apply_chat_template(case["messages"], tokenize=True, **kwargs)
        if hasattr(ids, "input_ids"):
            ids = ids["input_ids"]
        expected = agentrl["ids"]
        ok = ids == expected
        if not ok:
            chat_failures += 1
            at = first_difference(ids, expected)
            text = tokenizer.apply_chat_template(case["messages"], tokenize=False, **kwargs)
            detail = (
                f"first difference at token {at}: transformers {tokenizer.decode(ids[max(0, at - 20):at + 20])!r}"
                f" vs agentrl {tokenizer.decode(expected[max(0, at - 20):at + 20])!r} (template text {text[:80]!r}…)"
            )
        check(f"chat {case['name']}", ok, "" if ok else detail)
    print(f"apply_chat_template: {len(fixtures['chats']) - chat_failures}/{len(fixtures['chats'])} conversations token-identical to agentrl")

    # 3. ids past the real vocabulary are never generated
    config = AutoConfig.from_pretrained(model_dir)
    generation = GenerationConfig.from_pretrained(model_dir)
    spare = list(range(fixtures["tokenizer"]["vocabSize"], config.vocab_size))
    check("generation_config suppresses the spare ids", sorted(generation.suppress_tokens or []) == spare, f"suppress_tokens={generation.suppress_tokens}, spare ids {spare[:3]}…")

    for failure in failures[:25]:
        print("FAIL", failure)
    if len(failures) > 25:
        print(f"… and {len(failures) - 25} more failures")
    print(f"check:hf: {passed} passed, {len(failures)} failed")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
