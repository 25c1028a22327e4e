"""The strict server's self-test (run.sh step 'strict server self-test'):

1. the SDK as witness: the official tinker SDK, unchanged, trains, samples, saves and restores through the
   strict server, and the server refuses none of its requests;
2. the server is strict: hand-made requests that the SDK would not send are refused, each by the named rule;
   a retried POST with its idempotency key is answered from the first answer and applied once.

    python self_test.py --base-url http://127.0.0.1:8766 --base-model /path/model --log requests.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid

import httpx
import tinker
from tinker import types
from tinker.proto.request_conv import forward_backward_request_to_proto

failures: list[str] = []


def check(ok: bool, message: str) -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {message}", flush=True)
    if not ok:
        failures.append(message)


def datum(sequence: list[int]) -> types.Datum:
    return types.Datum(
        model_input=types.ModelInput.from_ints(sequence[:-1]),
        loss_fn_inputs={
            "target_tokens": types.TensorData(data=sequence[1:], dtype="int64", shape=[len(sequence) - 1]),
            "weights": types.TensorData(data=[1.0] * (len(sequence) - 1), dtype="float32", shape=[len(sequence) - 1]),
        },
    )


SEQUENCE = [257, 260, *b"hello world", 258]


def sdk_witness(base_url: str, base_model: str, log_path: str) -> None:
    """The official SDK, unchanged, through the strict server: nothing refused."""
    start = sum(1 for _ in open(log_path))
    service = tinker.ServiceClient(base_url=base_url, api_key="tml-check")
    training = service.create_lora_training_client(base_model=base_model, rank=8, seed=1).result()
    before = training.forward([datum(SEQUENCE)], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].data
    training.forward_backward([datum(SEQUENCE)], "cross_entropy").result()
    training.optim_step(types.AdamParams(learning_rate=0.01, grad_clip_norm=0.0)).result()
    after = training.forward([datum(SEQUENCE)], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].data
    sampler = training.save_weights_and_get_sampling_client(name="self-test").result()
    sample = sampler.sample(prompt=types.ModelInput.from_ints(SEQUENCE[:4]), num_samples=3,
                            sampling_params=types.SamplingParams(max_tokens=5, seed=7, temperature=1.0)).result()
    path = training.save_state("self-test").result().path
    restored = service.create_training_client_from_state(path).result()
    again = restored.forward([datum(SEQUENCE)], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].data
    entries = [json.loads(line) for line in list(open(log_path))[start:]]
    refused = [entry for entry in entries if entry.get("refused") or entry.get("error")]
    check(not refused, f"SDK witness: {len(entries)} SDK requests through the strict server, {len(refused)} refused {refused[:2]}")
    check(max(abs(a - b) for a, b in zip(before, after)) > 1e-6, "SDK witness: forward_backward + optim_step moved the log-probs")
    check(len(sample.sequences) == 3 and all(len(s.tokens) > 0 for s in sample.sequences), "SDK witness: num_samples = 3 in one asample")
    gap = max(abs(a - b) for a, b in zip(after, again))
    check(gap < 1e-5, f"SDK witness: create_training_client_from_state (load_weights as the model's first request) scores the same (max |Δ| {gap:.1e})")
    check(":train:" in restored.model_id, f"SDK witness: the restored model's id is the SDK-derived {restored.model_id}")


class Raw:
    """Hand-made requests: SDK-shaped by default, one thing wrong at a time."""

    def __init__(self, base_url: str):
        self.http = httpx.Client(base_url=base_url, timeout=300)

    def post(self, path: str, body: dict | bytes, *, key: str | None = "new", headers: dict | None = None) -> httpx.Response:
        sent = {"X-API-Key": "tml-check", "X-Stainless-Retry-Count": "0", **(headers or {})}
        if key is not None:
            sent["X-Idempotency-Key"] = f"stainless-python-retry-{uuid.uuid4()}" if key == "new" else key
        if isinstance(body, bytes):
            sent.setdefault("Content-Type", "application/x-protobuf")
            return self.http.post(path, content=body, headers=sent)
        return self.http.post(path, json=body, headers=sent)

    def result(self, request_id: str, proto: bool = False) -> httpx.Response:
        headers = {"Accept": "application/x-protobuf"} if proto else {}
        while True:
            answer = self.post("/api/v1/retrieve_future", {"request_id": request_id, "allow_metadata_only": False}, headers=headers)
            if answer.status_code != 408:
                return answer


def sdk_json(request) -> dict:
    return request.model_dump(exclude_unset=False, exclude_none=True, mode="json")


def refused(answer: httpx.Response, rule: str, what: str) -> None:
    got = answer.json().get("rule") if answer.headers.get("content-type", "").startswith("application/json") else None
    check(answer.status_code >= 400 and got == rule and answer.headers.get("x-should-retry") == "false",
          f"refused: {what} → HTTP {answer.status_code} rule {got} (expected {rule})")


def fwdbwd_body(model_id: str, seq_id: int) -> bytes:
    request = types.ForwardBackwardRequest(
        forward_backward_input=types.ForwardBackwardInput(data=[datum(SEQUENCE)], loss_fn="cross_entropy"),
        model_id=model_id, seq_id=seq_id)
    return forward_backward_request_to_proto(request).SerializeToString()


def applied(log_path: str, model_id: str, seq_id: int) -> int:
    """How many forward_backward POSTs of (model_id, seq_id) the strict server passed on to SkyRL."""
    entries = [json.loads(line) for line in open(log_path)]
    return sum(1 for e in entries if e["path"] == "/api/v1/forward_backward" and e.get("model_id") == model_id
               and e.get("seq_id") == seq_id and e.get("status") == 200 and not e.get("replayed"))


def strictness(base_url: str, base_model: str, log_path: str) -> None:
    raw = Raw(base_url)
    session = raw.post("/api/v1/create_session", sdk_json(types.CreateSessionRequest(tags=[], user_metadata=None, sdk_version=tinker.__version__))).json()["session_id"]
    create = types.CreateModelRequest(session_id=session, model_seq_id=0, base_model=base_model, lora_config=types.LoraConfig(rank=8, seed=2))
    refused(raw.post("/api/v1/create_model", {**sdk_json(create), "lora_rank": 8}), "sdk-schema", "create_model with an unknown field 'lora_rank'")
    refused(raw.post("/api/v1/create_model", {k: v for k, v in sdk_json(create).items() if k != "type"}), "sdk-fields", "create_model without 'type' (the SDK always sends it)")
    refused(raw.post("/api/v1/create_model", sdk_json(create), key=None), "idempotency", "a POST without X-Idempotency-Key")
    promise = raw.post("/api/v1/create_model", sdk_json(create)).json()
    model_id = raw.result(promise["request_id"]).json()["model_id"]

    load = {"session_id": session, "model_seq_id": 1, "path": "tinker://x/weights/y", "type": "load_weights"}
    refused(raw.post("/api/v1/load_weights", load), "sdk-schema", "load_weights without 'optimizer' (required by the SDK's LoadWeightsRequest)")
    refused(raw.post("/api/v1/forward_backward", {"model_id": model_id}, headers={"Content-Type": "application/json"}), "encoding", "forward_backward as JSON (the SDK sends protobuf)")
    refused(raw.post("/api/v1/forward", {"model_id": model_id}), "sdk-endpoint", "/api/v1/forward (the SDK sends forward_backward with forward_only)")
    refused(raw.post("/api/v1/forward_backward", fwdbwd_body(model_id, 1) + b"\xf8\x07\x01"), "sdk-proto", "forward_backward with an unknown protobuf field (number 127)")

    key = f"stainless-python-retry-{uuid.uuid4()}"
    first = raw.post("/api/v1/forward_backward", fwdbwd_body(model_id, 1), key=key)
    transport_retry = raw.post("/api/v1/forward_backward", fwdbwd_body(model_id, 1), key=key, headers={"X-Stainless-Retry-Count": "1"})
    outer_retry = raw.post("/api/v1/forward_backward", fwdbwd_body(model_id, 1))  # execute_with_retries: new key, same seq_id
    check(first.status_code == 200 and transport_retry.json() == first.json() == outer_retry.json(),
          f"a retried forward_backward (same key; or a new key with the same seq_id) gets the first answer, future {first.json().get('request_id')}")
    refused(raw.post("/api/v1/forward_backward", fwdbwd_body(model_id, 1), headers={"X-Stainless-Retry-Count": "2"}),
            "retry-without-key", "a transport retry (x-stainless-retry-count 2) of seq_id 1 under a key other than its first try's")
    other = types.ForwardBackwardRequest(forward_backward_input=types.ForwardBackwardInput(data=[datum(SEQUENCE[:6])], loss_fn="cross_entropy"), model_id=model_id, seq_id=1)
    refused(raw.post("/api/v1/forward_backward", forward_backward_request_to_proto(other).SerializeToString()), "seq-id-reuse", "seq_id 1 again with another body")
    count = applied(log_path, model_id, 1)
    check(count == 1, f"SkyRL received that forward_backward {count} time(s) for 3 POSTs (applied once)")
    refused(raw.result(first.json()["request_id"], proto=False), "proto-accept", "retrieve_future of a forward_backward without Accept: application/x-protobuf")
    check(raw.result(first.json()["request_id"], proto=True).headers.get("content-type") == "application/x-protobuf", "the forward_backward result comes back as protobuf")
    legacy = types.LoadWeightsRequest(model_id=model_id, seq_id=2, path=f"tinker://{model_id}/weights/none", optimizer=True)
    refused(raw.post("/api/v1/load_weights", sdk_json(legacy)), "load-first", "load_weights on a model that already trained (not its first request)")
    optim = sdk_json(types.OptimStepRequest(optim_params=types.AdamParams(learning_rate=0.01), model_id=model_id, seq_id=2))
    refused(raw.post("/api/v1/optim_step", {**optim, "adam_params": {**optim["adam_params"], "clip": 1.0}}), "sdk-schema", "optim_step with an unknown AdamParams field 'clip'")
    refused(raw.post("/api/v1/optim_step", optim, headers={"X-API-Key": "sk-wrong"}), "api-key", "a key that does not start with tml-")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--base-model", required=True)
    parser.add_argument("--log", required=True)
    options = parser.parse_args()
    sdk_witness(options.base_url, options.base_model, options.log)
    strictness(options.base_url, options.base_model, options.log)
    print(f"strict server self-test: {'passed' if not failures else f'{len(failures)} FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
