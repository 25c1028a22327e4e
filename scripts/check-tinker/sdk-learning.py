"""The official tinker SDK on learning-check.ts's task, through the same strict server: the learning signal's
witness. GRPO on "answer in ASCII" (one new token; reward 1 for a byte below 128), the server's own
importance_sampling loss, Adam at lr 0.01; the expected reward J = Σ_{t<128} π(t | prompt), averaged over the
prompts, is read with forward (cross_entropy log-probs of the 128 one-token replies) before each update and after
the last. Passes when J rises by at least 0.01 and in most updates — the server learns, whoever drives it.

    python sdk-learning.py http://127.0.0.1:8766 /path/model
"""

import sys

import numpy as np
import tinker
from tinker import types

ITERATIONS, GROUP, LEARNING_RATE, MARGIN = 6, 32, 0.01, 0.01
PROMPTS = [[257, 259, *b"Answer in ASCII.", 258, 261], [257, 259, *b"Say something.", 258, 261]]


def datum(tokens: list[int], **inputs: list[float]) -> types.Datum:
    n = len(tokens) - 1
    fields = {"target_tokens": types.TensorData(data=tokens[1:], dtype="int64", shape=[n])}
    fields.update({name: types.TensorData(data=values, dtype="float32", shape=[n]) for name, values in inputs.items()})
    return types.Datum(model_input=types.ModelInput.from_ints(tokens[:-1]), loss_fn_inputs=fields)


def expected_reward(training) -> float:
    data = [datum(prompt + [token], weights=[1.0] * len(prompt)) for prompt in PROMPTS for token in range(128)]
    outputs = training.forward(data, "cross_entropy").result().loss_fn_outputs
    return float(sum(np.exp(output["logprobs"].data[-1]) for output in outputs)) / len(PROMPTS)


def main() -> int:
    service = tinker.ServiceClient(base_url=sys.argv[1], api_key="tml-check")
    training = service.create_lora_training_client(base_model=sys.argv[2], rank=8, seed=5).result()
    history = []
    for iteration in range(ITERATIONS):
        history.append(expected_reward(training))
        sampler = training.save_weights_and_get_sampling_client(name=f"learning-{iteration}").result()
        data, sampled = [], []
        for prompt in PROMPTS:
            params = types.SamplingParams(max_tokens=1, seed=1000 * iteration + 7, temperature=1.0)
            response = sampler.sample(prompt=types.ModelInput.from_ints(prompt), num_samples=GROUP, sampling_params=params).result()
            rewards = np.array([float(sequence.tokens[0] < 128) for sequence in response.sequences])
            advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
            sampled.append(rewards.mean())
            for sequence, advantage in zip(response.sequences, advantages):
                pad = [0.0] * (len(prompt) - 1)
                data.append(datum(prompt + list(sequence.tokens), logprobs=pad + list(sequence.logprobs), advantages=pad + [float(advantage)]))
        update = training.forward_backward(data, "importance_sampling")
        step = training.optim_step(types.AdamParams(learning_rate=LEARNING_RATE))
        update.result(), step.result()
        print(f"iteration {iteration}: expected reward J {history[-1]:.4f} before the update; sampled mean {np.mean(sampled):.3f}", flush=True)
    history.append(expected_reward(training))
    rises = sum(after > before for before, after in zip(history, history[1:]))
    ok = history[-1] >= history[0] + MARGIN and rises > ITERATIONS / 2
    print(f"{'ok  ' if ok else 'FAIL'} SDK learning witness: J {history[0]:.4f} → {history[-1]:.4f} over {ITERATIONS} updates, rising in {rises} of {ITERATIONS}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
