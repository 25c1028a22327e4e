"""check:python, datasets — `agentrl export` files in Hugging Face datasets and TRL's own data utilities.

    python check_datasets.py <fixtures-dir>      (written by write-fixtures.ts)

load_dataset("parquet" | "json") reads both files with the same rows and the documented columns:
TRL reads `messages` (SFT, language modeling) and `prompt` / `completion` (prompt-completion; GRPO
reads `prompt`); verl's RL dataset reads `data_source` and `prompt`, its multi-turn SFT dataset
`messages`; token-level trainers read `input_ids`, `attention_mask`, `loss_mask`, `logprobs`,
`advantages`. TRL's `is_conversational` accepts the rows, and TRL's `apply_chat_template` with the
exported tokenizer turns `messages` and `prompt` + `completion` back into exactly `input_ids`.
"""

import json
import sys
from pathlib import Path

from datasets import load_dataset
from transformers import AutoTokenizer
from trl.data_utils import apply_chat_template, is_conversational

COLUMNS = [
    "run", "step", "index", "group_id", "seed", "data_source", "messages", "prompt", "completion", "input_ids",
    "attention_mask", "loss_mask", "logprobs", "token_rewards", "advantages", "reward", "success", "truncated", "num_turns",
    "reward_components", "reward_failures",
]
TRL_COLUMNS = ["messages", "prompt", "completion"]
VERL_COLUMNS = ["data_source", "prompt", "messages"]
TOKEN_COLUMNS = ["input_ids", "attention_mask", "loss_mask", "logprobs", "advantages"]


def main() -> int:
    root = Path(sys.argv[1])
    tokenizer = AutoTokenizer.from_pretrained(root / "llama")
    passed = 0
    failures = []

    def check(name, ok, detail=""):
        nonlocal passed
        if ok:
            passed += 1
        else:
            failures.append(f"{name}: {detail}")

    parquet = load_dataset("parquet", data_files=str(root / "trajectories.parquet"), split="train")
    jsonl = load_dataset("json", data_files=str(root / "trajectories.jsonl"), split="train")
    print(f"parquet features: {parquet.features}")
    for name, dataset in [("parquet", parquet), ("jsonl", jsonl)]:
        check(f"{name} columns", dataset.column_names == COLUMNS, str(dataset.column_names))
        check(f"{name} rows", len(dataset) == 6, str(len(dataset)))
        messages_feature = dataset.features["messages"]
        element = getattr(messages_feature, "feature", messages_feature[0] if isinstance(messages_feature, list) else None)
        check(f"{name} messages are a list of {{role, content}} strings", set(element.keys()) == {"role", "content"} and all(v.dtype == "string" for v in element.values()), str(messages_feature))
    check("parquet and jsonl hold the same rows", parquet.to_list() == jsonl.to_list(), "rows differ")

    for row in parquet:
        name = f"row {row['step']}.{row['index']}"
        check(f"{name} messages conversational (TRL)", is_conversational({"messages": row["messages"]}))
        check(f"{name} prompt/completion conversational (TRL)", is_conversational({"prompt": row["prompt"], "completion": row["completion"]}))
        text = apply_chat_template({"messages": row["messages"]}, tokenizer)["text"]
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        check(f"{name} TRL apply_chat_template(messages) = input_ids", ids == row["input_ids"], f"{ids[:20]} vs {row['input_ids'][:20]}")
        pair = apply_chat_template({"prompt": row["prompt"], "completion": row["completion"]}, tokenizer)
        ids = tokenizer(pair["prompt"] + pair["completion"], add_special_tokens=False)["input_ids"]
        check(f"{name} TRL apply_chat_template(prompt, completion) = input_ids", ids == row["input_ids"], f"{ids[:20]} vs {row['input_ids'][:20]}")
        lengths = {len(row[column]) for column in TOKEN_COLUMNS + ["token_rewards"]}
        check(f"{name} token columns have one length", len(lengths) == 1, str(lengths))
        check(f"{name} data_source", row["data_source"] == "agentrl/calculator", row["data_source"])

    print(f"TRL reads: {', '.join(TRL_COLUMNS)}; verl reads: {', '.join(VERL_COLUMNS)}; token level: {', '.join(TOKEN_COLUMNS)}")
    for failure in failures:
        print("FAIL", failure)
    print(f"check_datasets: {passed} passed, {len(failures)} failed")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
