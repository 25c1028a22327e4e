"""A strict Tinker server for `npm run check:tinker`: a validating proxy in front of SkyRL's Tinker server.

Why a proxy and not a server answering from the types alone: the check must show real numbers (sampled log-probs
= forward log-probs, weights that move, a reward that rises), which only a real trainer gives. SkyRL 0.3.0 (the
newest on PyPI) speaks an older JSON dialect, so this proxy speaks tinker 0.38.0's wire to the client, checks every
request against the SDK's own types (strict_rules.py, sdk_wire.py), and translates what SkyRL lacks:
  - forward_backward arrives as the SDK's protobuf (forward = forward_only), goes to SkyRL as JSON (/forward for
    forward_only); ForwardBackwardOutput and SampleResponse go back as protobuf when the client asks for it;
  - create-via-load (a `load_weights` with session_id + model_seq_id as a model's FIRST request; model id
    `{session_id}:train:{model_seq_id}`) becomes SkyRL create_model + load_weights under an alias;
  - a failed SkyRL future (HTTP 400/500) becomes the SDK's RequestFailedResponse; a slow one a 408 try_again.
Checkpoint clean-up (DELETE a checkpoint, PUT its ttl) is checked for shape and answered 404: SkyRL 0.3.0 has neither.
Refused (HTTP 400, `x-should-retry: false`): unknown or missing fields, forward_backward not protobuf, a POST
without X-Idempotency-Key, a transport retry of an applied seq_id under another key, a seq_id reused for another
body, load_weights that is not a model's first request, /api/v1/forward (the SDK never calls it), a proto result
asked for as JSON, no X-API-Key. A retried POST (its key; or a new key, same seq_id and body, as the SDK's
execute_with_retries resends) is answered from the first answer and not applied twice. Every request is one JSON
line in --log (what docs/tinker.md's cost table counts).

    python strict_server.py --upstream http://127.0.0.1:8765 --port 8766 --log requests.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import dataclass

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sdk_wire import WireError, decode_forward_backward, encode_forward_backward_output, encode_sample_response
from strict_rules import MUTATING, REQUEST_MODELS, Ledger, Refused, fingerprint, validate_json
from tinker.types import ClientConfigResponse, ClientDynamicConfigResponse

PROTO = "application/x-protobuf"
CHECKPOINT_PATH = re.compile(r"/api/v1/training_runs/(?P<run>[^/]+)/checkpoints/(?P<checkpoint>[^/]+)(?P<ttl>/ttl)?")


@dataclass
class Call:
    """One POST being checked: what the rules need to know about it."""

    request: Request
    path: str
    body: bytes
    key: str
    print_: str
    retry_count: int
    entry: dict


class StrictServer:
    def __init__(self, upstream: str, log_path: str, retrieve_wait_s: float, base_models: dict[str, str] | None = None):
        self.upstream = httpx.AsyncClient(base_url=upstream, timeout=httpx.Timeout(600.0))
        # --serve-as: hub names the client may ask for, each served by SkyRL's own base model (README's recipe as written).
        self.base_models = base_models or {}
        self.log_file = open(log_path, "a", buffering=1)
        self.retrieve_wait_s = retrieve_wait_s
        self.ledger = Ledger()
        self.aliases: dict[str, str] = {}
        self.future_kinds: dict[str, str] = {}
        self.prompt_lengths: dict[str, int] = {}  # asample futures that asked for prompt log-probs: the prompt's length

    def log(self, entry: dict) -> None:
        self.log_file.write(json.dumps(entry, sort_keys=True) + "\n")

    async def handle(self, request: Request) -> Response:
        started = time.perf_counter()
        body = await request.body()
        path = request.url.path
        entry = {"t": round(time.time(), 3), "method": request.method, "path": path, "request_bytes": len(body),
                 "content_type": request.headers.get("content-type"), "idempotency_key": request.headers.get("x-idempotency-key"),
                 "retry_count": request.headers.get("x-stainless-retry-count")}
        try:
            response = await self.route(request, path, body, entry)
        except Refused as refusal:
            entry["refused"] = refusal.rule
            response = Response(json.dumps({"detail": str(refusal), "rule": refusal.rule}), status_code=refusal.status,
                                 media_type="application/json", headers={"x-should-retry": "false"})
        except Exception as error:  # a bug here or upstream: logged and answered, never a silent hang
            entry["error"] = f"{type(error).__name__}: {error}"
            response = Response(json.dumps({"detail": entry["error"]}), status_code=500, media_type="application/json",
                                headers={"x-should-retry": "false"})
        entry.update(status=response.status_code, response_bytes=len(response.body), ms=round(1000 * (time.perf_counter() - started), 1))
        self.log(entry)
        return response

    async def route(self, request: Request, path: str, body: bytes, entry: dict) -> Response:
        if path == "/api/v1/healthz":
            return await self.forward_raw("GET", path)
        if not (request.headers.get("x-api-key") or "").startswith(("tml-", "eyJ")):
            raise Refused("api-key", "no X-API-Key starting with tml- (or a JWT, eyJ…): the SDK refuses any other key", 401)
        if request.method == "GET":
            return await self.forward_raw("GET", self.rewrite_path(path))
        key = request.headers.get("x-idempotency-key")
        checkpoint = CHECKPOINT_PATH.fullmatch(path)
        if checkpoint is not None and request.method in ("DELETE", "PUT"):
            return self.checkpoint_request(request.method, checkpoint, body, key, entry)
        if not key:
            raise Refused("idempotency", f"POST {path} without X-Idempotency-Key (the SDK sends one on every POST and reuses it on retries)")
        if path == "/api/v1/forward":
            raise Refused("sdk-endpoint", "the SDK never calls /api/v1/forward: forward is /api/v1/forward_backward with forward_only = true", 404)
        if path != "/api/v1/forward_backward" and path not in REQUEST_MODELS:
            raise Refused("sdk-endpoint", f"{path} is not an endpoint this strict server checks", 404)
        print_ = fingerprint(path, body)
        if path in MUTATING:
            stored = self.ledger.replay(key, print_)
            if stored is not None:
                entry["replayed"] = "idempotency-key"
                return Response(stored[2], status_code=stored[0], headers=stored[1])
        retry_count = int(request.headers.get("x-stainless-retry-count") or 0)
        call = Call(request, path, body, key, print_, retry_count, entry)
        response = await self.dispatch(call)
        if path in MUTATING and response.status_code < 400:
            self.ledger.remember(key, print_, response.status_code, {"content-type": response.headers.get("content-type", "")}, response.body)
        return response

    def checkpoint_request(self, method: str, match: re.Match, body: bytes, key: str | None, entry: dict) -> Response:
        """The SDK's checkpoint clean-up (RestClient.delete_checkpoint: DELETE …/checkpoints/{id}; set_checkpoint_ttl:
        PUT …/checkpoints/{id}/ttl {ttl_seconds}) checked for shape; SkyRL 0.3.0 has neither, so 404, logged as an
        upstream gap (not a client fault)."""
        if not key:
            raise Refused("idempotency", f"{method} {entry['path']} without X-Idempotency-Key (the SDK sends one on every non-GET)")
        if method == "PUT":
            if match.group("ttl") is None:
                raise Refused("sdk-endpoint", "PUT is only …/checkpoints/{id}/ttl in the SDK", 404)
            try:
                payload = json.loads(body)
            except ValueError as error:
                raise Refused("json-body", f"ttl: not JSON ({error})") from error
            if not isinstance(payload, dict) or set(payload) != {"ttl_seconds"} or not (payload["ttl_seconds"] is None or isinstance(payload["ttl_seconds"], int)):
                raise Refused("sdk-schema", f"the SDK's ttl body is exactly {{ttl_seconds: int | null}}, got {payload!r}")
        elif match.group("ttl") is not None or body:
            raise Refused("sdk-schema", "the SDK's delete_checkpoint is a DELETE of …/checkpoints/{id} with no body")
        entry["upstream_gap"] = "checkpoint ttl" if method == "PUT" else "checkpoint delete"
        # 404 as SkyRL itself answers an unknown route (the SDK does not retry a 404; it retries any 5xx for minutes).
        return Response(json.dumps({"detail": f"SkyRL 0.3.0 has no {entry['upstream_gap']}: the checkpoint is kept"}),
                        status_code=404, media_type="application/json", headers={"x-should-retry": "false"})

    async def once(self, call: Call, owner: str, seq_id: int | None, what: str, apply) -> Response:
        """Apply a sequenced request once: a retry of an applied seq_id gets the first answer (ledger.claim_sequence)."""
        first_key = self.ledger.claim_sequence(owner, seq_id, call.key, call.print_, call.retry_count, what)
        if first_key is not None:
            stored = self.ledger.stored(first_key)
            if stored is None:
                raise Refused("in-flight", f"{what} seq_id {seq_id} of {owner} is still being applied", 409)
            call.entry["replayed"] = "seq-id"
            return Response(stored[2], status_code=stored[0], headers=stored[1])
        try:
            response = await apply()
        except BaseException:
            self.ledger.release(owner, seq_id)
            raise
        if response.status_code >= 400:
            self.ledger.release(owner, seq_id)
        return response

    async def dispatch(self, call: Call) -> Response:
        request, path, body, entry = call.request, call.path, call.body, call.entry
        if path == "/api/v1/forward_backward":
            return await self.forward_backward(call)
        if "json" not in (request.headers.get("content-type") or ""):
            raise Refused("encoding", f"{path} is JSON in the SDK; got Content-Type {request.headers.get('content-type')!r}", 415)
        try:
            payload = json.loads(body)
        except ValueError as error:
            raise Refused("json-body", f"{path}: not JSON ({error})") from error
        sdk_request = validate_json(path, payload)
        entry.update({name: payload[name] for name in ("model_id", "seq_id", "num_samples", "sampling_session_id") if name in payload})
        if path == "/api/v1/client/config":
            return self.json(ClientConfigResponse(proto_compress_fwdbwd=False, sample_use_retrieve_futures=False,
                                                  custom_loss_server_side=False, sample_join_sampling_session=False).model_dump())
        if path == "/api/v1/client/dynamic_config":
            return self.json(ClientDynamicConfigResponse().model_dump())
        if path == "/api/v1/retrieve_future":
            return await self.retrieve(request, payload["request_id"], entry)
        if path == "/api/v1/load_weights":
            return await self.load_weights(call, sdk_request)
        if path == "/api/v1/create_model" and sdk_request.lora_config is None:
            raise Refused("upstream", "SkyRL 0.3.0 trains LoRA only: create_model without lora_config cannot be served", 501)
        upstream = dict(payload)
        if upstream.get("base_model") in self.base_models:
            entry["served_as"] = upstream["base_model"]
            upstream["base_model"] = self.base_models[upstream["base_model"]]
        if "model_id" in upstream:
            upstream["model_id"] = self.aliases.get(upstream["model_id"], upstream["model_id"])
        if path in ("/api/v1/optim_step", "/api/v1/save_weights", "/api/v1/save_weights_for_sampler"):
            if path == "/api/v1/optim_step" and payload["adam_params"].get("grad_clip_norm", 0) > 0:
                entry["dropped_by_upstream"] = ["adam_params.grad_clip_norm"]
            return await self.once(call, payload["model_id"], payload.get("seq_id"), path.rsplit("/", 1)[-1],
                                   lambda: self.forward_json(path, upstream))
        if path == "/api/v1/asample":
            self.note_sample(payload, entry)
            if payload.get("sampling_session_id") is not None:
                return await self.once(call, payload["sampling_session_id"], payload.get("seq_id"), "asample",
                                       lambda: self.sample(payload, upstream))
            return await self.sample(payload, upstream)
        response = await self.forward_json(path, upstream)
        return response

    async def sample(self, payload: dict, upstream: dict) -> Response:
        response = await self.forward_json("/api/v1/asample", upstream)
        if response.status_code != 200:
            return response
        # tinker 0.38.0's sampling promise names each sample (one id per num_samples); SkyRL 0.3.0's does not.
        promise = json.loads(response.body)
        self.future_kinds[promise["request_id"]] = "sample"
        if payload.get("prompt_logprobs"):
            self.prompt_lengths[promise["request_id"]] = sum(len(chunk.get("tokens", [])) for chunk in payload["prompt"]["chunks"])
        promise["sample_sequence_ids"] = [f"{promise['request_id']}:{index}" for index in range(payload.get("num_samples", 1))]
        return self.json(promise)

    def note_sample(self, payload: dict, entry: dict) -> None:
        chunks = payload["prompt"]["chunks"]
        entry["prompt_tokens"] = sum(len(chunk.get("tokens", [])) for chunk in chunks)
        entry["max_tokens"] = payload["sampling_params"].get("max_tokens")
        entry["prompt_logprobs"] = bool(payload.get("prompt_logprobs"))
        unsupported = [name for name in ("topk_sample_logprobs", "prompt_alt_tokens_k", "topk_prompt_logprobs") if payload.get(name)]
        if payload.get("target_prompt_logprobs") is not None:
            unsupported.append("target_prompt_logprobs")
        if unsupported:
            raise Refused("upstream", f"SkyRL 0.3.0 cannot serve {unsupported}", 501)

    async def forward_backward(self, call: Call) -> Response:
        request, body, entry = call.request, call.body, call.entry
        content_type = request.headers.get("content-type") or ""
        if PROTO not in content_type:
            raise Refused("encoding", f"forward_backward is protobuf in tinker 0.38.0 (Content-Type {PROTO}); got {content_type!r}", 415)
        if request.headers.get("content-encoding"):
            raise Refused("encoding", "Content-Encoding on forward_backward while client/config said proto_compress_fwdbwd = false")
        try:
            skyrl_input, forward_only, summary = decode_forward_backward(body)
        except WireError as error:
            raise Refused("sdk-proto", str(error)) from error
        entry.update(summary)
        model_id = summary["model_id"]
        upstream_id = self.aliases.get(model_id, model_id)

        async def apply() -> Response:
            if forward_only:
                response = await self.forward_json("/api/v1/forward", {"model_id": upstream_id, "forward_input": skyrl_input})
            else:
                response = await self.forward_json("/api/v1/forward_backward", {"model_id": upstream_id, "forward_backward_input": skyrl_input})
            if response.status_code == 200:
                self.future_kinds[json.loads(response.body)["request_id"]] = "forward_backward"
            return response

        return await self.once(call, model_id, summary["seq_id"], "forward_backward", apply)

    async def load_weights(self, call: Call, sdk_request) -> Response:
        entry = call.entry
        if sdk_request.session_id is None:
            model_id = sdk_request.model_id
            if model_id is None or sdk_request.seq_id is None:
                raise Refused("load-first", "load_weights needs session_id + model_seq_id (create-via-load) or model_id + seq_id")
            if sdk_request.seq_id != 1 or not self.ledger.first_request(model_id, 1, call.print_):
                raise Refused("load-first", f"load_weights on {model_id} is not its first request (seq_id {sdk_request.seq_id}): hosted Tinker accepts it only then")
            return await self.once(call, model_id, 1, "load_weights", lambda: self.forward_json(
                "/api/v1/load_weights", {"model_id": self.aliases.get(model_id, model_id), "path": sdk_request.path}))
        if sdk_request.model_id is not None or sdk_request.model_seq_id is None:
            raise Refused("load-first", "create-via-load takes session_id with model_seq_id and no model_id")
        alias = f"{sdk_request.session_id}:train:{sdk_request.model_seq_id}"
        if not self.ledger.first_request(alias, 0, call.print_):
            raise Refused("load-first", f"model {alias} already exists: load_weights is accepted only as a model's first request")
        entry["model_id"] = alias
        return await self.once(call, alias, 0, "load_weights", lambda: self.create_via_load(sdk_request, alias))

    async def create_via_load(self, sdk_request, alias: str) -> Response:
        source = sdk_request.path.removeprefix("tinker://").split("/", 1)[0]
        run = await self.upstream.get(f"/api/v1/training_runs/{self.aliases.get(source, source)}")
        if run.status_code != 200:
            return Response(run.content, status_code=run.status_code, media_type="application/json")
        run_info = run.json()
        created = await self.upstream.post("/api/v1/create_model", json={
            "session_id": sdk_request.session_id,
            "base_model": self.base_models.get(sdk_request.base_model or "", sdk_request.base_model) or run_info["base_model"],
            "lora_config": {"rank": run_info["lora_rank"]}})
        if created.status_code != 200:
            return Response(created.content, status_code=created.status_code, media_type="application/json")
        upstream_id = created.json()["model_id"]
        done = await self.upstream.post("/api/v1/retrieve_future", json={"request_id": created.json()["request_id"]})
        if done.status_code != 200:
            return Response(done.content, status_code=done.status_code, media_type="application/json")
        self.aliases[alias] = upstream_id
        return await self.forward_json("/api/v1/load_weights", {"model_id": upstream_id, "path": sdk_request.path})

    async def retrieve(self, request: Request, request_id: str, entry: dict) -> Response:
        kind = self.future_kinds.get(request_id)
        entry["future_kind"] = kind
        wants_proto = PROTO in (request.headers.get("accept") or "")
        if kind is not None and not wants_proto:
            raise Refused("proto-accept", f"a {kind} result is protobuf in tinker 0.38.0: retrieve_future must send Accept: {PROTO}")
        try:
            answer = await self.upstream.post("/api/v1/retrieve_future", json={"request_id": request_id}, timeout=self.retrieve_wait_s)
        except httpx.TimeoutException:
            return self.json({"type": "try_again", "request_id": request_id, "queue_state": "active"}, 408)
        if answer.status_code in (400, 500):
            detail = answer.json().get("detail", answer.text)
            return self.json({"error": str(detail), "category": "user" if answer.status_code == 400 else "server"})
        if answer.status_code != 200:
            return Response(answer.content, status_code=answer.status_code, media_type="application/json")
        result = answer.json()
        if kind == "forward_backward":
            return Response(encode_forward_backward_output(result), media_type=PROTO)
        if kind == "sample":
            # tinker 0.38.0's SampleResponse.prompt_logprobs has one entry per prompt token, NaN first (nothing
            # predicts token 0); SkyRL 0.3.0 leaves that first entry out: put it back, as the hosted server sends it.
            length = self.prompt_lengths.get(request_id)
            prompt = result.get("prompt_logprobs")
            if length is not None and isinstance(prompt, list) and len(prompt) == length - 1:
                result["prompt_logprobs"] = [None, *prompt]
                entry["translated"] = "prompt_logprobs: SkyRL's n - 1 entries → the SDK's n (NaN first)"
            return Response(encode_sample_response(result), media_type=PROTO)
        return self.json(result)

    def rewrite_path(self, path: str) -> str:
        for alias, upstream_id in self.aliases.items():
            path = path.replace(alias, upstream_id)
        return path

    async def forward_json(self, path: str, payload: dict) -> Response:
        answer = await self.upstream.post(path, json=payload)
        return Response(answer.content, status_code=answer.status_code, media_type="application/json")

    async def forward_raw(self, method: str, path: str) -> Response:
        answer = await self.upstream.request(method, path)
        return Response(answer.content, status_code=answer.status_code, media_type=answer.headers.get("content-type"))

    @staticmethod
    def json(value: object, status: int = 200) -> Response:
        return Response(json.dumps(value), status_code=status, media_type="application/json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="SkyRL Tinker server, e.g. http://127.0.0.1:8765")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--log", required=True, help="JSONL file: one line per request")
    parser.add_argument("--retrieve-wait-s", type=float, default=30.0, help="answer 408 try_again after this long")
    parser.add_argument("--serve-as", action="append", default=[], metavar="HUB_NAME=BASE_MODEL",
                        help="accept base_model HUB_NAME and serve it with SkyRL's BASE_MODEL (repeatable)")
    options = parser.parse_args()
    base_models = dict(pair.split("=", 1) for pair in options.serve_as)
    server = StrictServer(options.upstream, options.log, options.retrieve_wait_s, base_models)
    app = Starlette(routes=[Route("/{path:path}", server.handle, methods=["GET", "POST", "PUT", "DELETE", "PATCH"])])
    uvicorn.run(app, host=options.host, port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
