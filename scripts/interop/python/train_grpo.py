"""check:python, TRL — GRPOTrainer trains on an agentrl environment served by `agentrl serve-env`.

    python train_grpo.py --env-url http://127.0.0.1:8766 --model <export-hf folder> --out <dir> [--steps 4]

The rewards come from the agentrl `bandit` environment through OpenEnv's own client
(`openenv-core`'s GenericEnvClient, one WebSocket session per episode) inside TRL's `rollout_func`:
reset(seed) → the observation becomes the prompt (rendered by the exported chat template) →
the policy samples its answer → step({"text": "<answer>…</answer>"}) → the env's reward.
The model is the agentrl export itself (a tiny random-weight Llama; no hub download). To keep a
random model's episodes scorable, the reply is sampled from the policy restricted to the two arm
names (the log-probs TRL gets are the policy's own, over the full vocabulary).

On GPUs the same script runs unchanged with `accelerate launch`, a real model folder for --model
and, for speed, `use_vllm=True` in GRPOConfig (docs/hugging-face-interop.md).
"""

import argparse
import itertools
import math
import sys

import torch
from datasets import Dataset
from openenv.core.generic_client import GenericEnvClient
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
from trl import GRPOConfig, GRPOTrainer


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--env-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    torch.manual_seed(0)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    answer_prefix = tokenizer.encode("<answer>", add_special_tokens=False)
    arm_ids = [tokenizer.convert_tokens_to_ids(arm) for arm in ["A", "B"]]
    end_id = tokenizer.eos_token_id
    seeds = itertools.count(1)
    episodes = []

    def rollout_func(prompts, trainer):
        """One episode per prompt: OpenEnv reset → sample → step; returns ids, log-probs and the env's reward."""
        policy = trainer.model
        prompt_ids, completion_ids, logprobs, rewards = [], [], [], []
        for _ in prompts:
            seed = next(seeds)
            with GenericEnvClient(base_url=args.env_url).sync() as env:
                observation = env.reset(seed=seed).observation
                messages = [{"role": "user", "content": observation["text"] + "\nReply with <answer>A</answer> or <answer>B</answer>."}]
                ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
                ids = list(ids["input_ids"] if hasattr(ids, "input_ids") else ids) + answer_prefix
                with torch.no_grad():
                    logits = policy(torch.tensor([ids], device=policy.device)).logits[0, -1].float()
                full = torch.log_softmax(logits, dim=-1)
                arm_logits = logits[arm_ids]
                choice = arm_ids[int(torch.multinomial(torch.softmax(arm_logits, dim=-1), 1))]
                completion = [choice, end_id]
                with torch.no_grad():
                    next_logits = policy(torch.tensor([ids + [choice]], device=policy.device)).logits[0, -1].float()
                token_logprobs = [float(full[choice]), float(torch.log_softmax(next_logits, dim=-1)[end_id])]
                arm = tokenizer.decode([choice])
                result = env.step({"text": f"<answer>{arm}</answer>"})
            prompt_ids.append(ids)
            completion_ids.append(completion)
            logprobs.append(token_logprobs)
            rewards.append(float(result.reward))
            episodes.append((seed, arm, float(result.reward), bool(result.done)))
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": logprobs, "env_reward": rewards}

    def env_reward(prompts, completions, env_reward, **kwargs):
        return env_reward

    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": "Play the agentrl bandit."}]}] * 64)
    config = GRPOConfig(
        output_dir=args.out,
        use_cpu=True,
        max_steps=args.steps,
        per_device_train_batch_size=8,
        num_generations=8,
        max_completion_length=2,
        learning_rate=0.05,
        beta=0.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=0,
        disable_tqdm=True,
    )
    seen = []

    class PrintLog(TrainerCallback):
        def on_log(self, _args, state, _control, logs=None, **kwargs):  # noqa: D102
            if logs and "loss" in logs:
                line = {k: round(v, 4) if isinstance(v, float) else v for k, v in logs.items() if k in ("loss", "reward", "reward_std", "rewards/env_reward/mean", "grad_norm", "entropy")}
                seen.append(logs)
                print(f"step {state.global_step}: {line}", flush=True)

    trainer = GRPOTrainer(model=model, reward_funcs=env_reward, args=config, train_dataset=dataset, processing_class=tokenizer, rollout_func=rollout_func, callbacks=[PrintLog()])
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    trainer.train()
    moved = sum(1 for name, p in trainer.model.named_parameters() if not torch.equal(before[name], p.detach()))
    choices_b = [sum(1 for _, arm, _, _ in episodes[i:i + 8] if arm == "B") for i in range(0, len(episodes), 8)]
    print(f"episodes: {len(episodes)} over OpenEnv, all done: {all(done for *_, done in episodes)}; arm B chosen per batch of 8: {choices_b}")
    print(f"parameters moved: {moved}/{len(before)}")
    failures = []
    if len(seen) != args.steps:
        failures.append(f"{len(seen)} logged steps, expected {args.steps}")
    if not all(math.isfinite(log["loss"]) for log in seen):
        failures.append("a loss is not finite")
    if not all("reward" in log and math.isfinite(log["reward"]) for log in seen):
        failures.append("a step logged no reward")
    if moved == 0:
        failures.append("no parameter moved")
    for failure in failures:
        print("FAIL", failure)
    print(f"train_grpo: {4 - len(failures)} passed, {len(failures)} failed")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
