"""The second witness of `npm run check:tinker`: the official tinker SDK sends the same requests as
agentrl's TinkerPolicy did (witness.json, written by check.ts) to the same server, and must get the
same numbers: the seeded sample from the same sampler weights (tokens and log-probs), and the
forward log-probs of the same sequences after loading the same training checkpoint.

    python sdk-witness.py witness.json [base-url]

base-url (run.sh passes the strict server's) defaults to the server agentrl used.
"""

import json
import sys

import tinker
from tinker import types


def main() -> int:
    witness = json.load(open(sys.argv[1]))
    service = tinker.ServiceClient(base_url=sys.argv[2] if len(sys.argv) > 2 else witness["baseUrl"], api_key="tml-local")
    failures = 0

    sample = witness["sample"]
    sampler = service.create_sampling_client(model_path=witness["samplerPath"])  # SDK 0.38: a sampling session
    response = sampler.sample(
        prompt=types.ModelInput.from_ints(sample["prompt"]),
        num_samples=1,
        sampling_params=types.SamplingParams(max_tokens=sample["maxTokens"], seed=sample["seed"], temperature=sample["temperature"], stop=sample["stop"]),
    ).result()
    sequence = response.sequences[0]
    same_tokens = list(sequence.tokens) == sample["tokens"]
    gap = max(abs(a - b) for a, b in zip(sequence.logprobs, sample["logprobs"]))
    ok = same_tokens and gap < 1e-6
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} sample: SDK tokens {list(sequence.tokens)} {'==' if same_tokens else '!='} agentrl's; log-prob max |Δ| {gap:.2e}")

    # SDK 0.38: create-via-load, the load_weights is the fresh model's first request
    training = service.create_training_client_from_state(witness["tinkerPath"])
    sequences = witness["forward"]["sequences"]
    data = [
        types.Datum(
            model_input=types.ModelInput.from_ints(s[:-1]),
            loss_fn_inputs={"target_tokens": types.TensorData(data=s[1:], dtype="int64", shape=[len(s) - 1]), "weights": types.TensorData(data=[1.0] * (len(s) - 1), dtype="float32", shape=[len(s) - 1])},
        )
        for s in sequences
    ]
    output = training.forward(data, "cross_entropy").result()
    gap = 0.0
    for ours, theirs in zip(witness["forward"]["logprobs"], output.loss_fn_outputs):
        gap = max(gap, max(abs(a - b) for a, b in zip(ours, theirs["logprobs"].data)))
    ok = gap < 1e-5
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} forward after create_training_client_from_state({witness['tinkerPath']}): log-prob max |Δ| vs agentrl {gap:.2e} over {sum(len(s) - 1 for s in sequences)} tokens")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
