"""The strict server's rules: JSON bodies checked against the tinker SDK's own request models, and a ledger of
applied requests (idempotency keys, per-model sequence ids, load_weights only as a model's first request).

Every JSON request type is imported from the installed `tinker` package (tinker.types.*: StrictBase models,
extra="forbid"), so the check follows the SDK, not a reading of it. A body passes when
  1. the SDK's model validates it (no unknown field, every required field, right types), and
  2. it holds every field the SDK itself would send: the SDK serialises with
     model_dump(exclude_unset=False, exclude_none=True), so every field whose value is not None is on the wire.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

import pydantic
from tinker import types

# The JSON endpoints the SDK POSTs, and the SDK model of each body (forward_backward is protobuf: sdk_wire.py).
REQUEST_MODELS: dict[str, type[pydantic.BaseModel]] = {
    "/api/v1/client/config": types.ClientConfigRequest,
    "/api/v1/client/dynamic_config": types.ClientConfigRequest,
    "/api/v1/create_session": types.CreateSessionRequest,
    "/api/v1/session_heartbeat": types.SessionHeartbeatRequest,
    "/api/v1/create_sampling_session": types.CreateSamplingSessionRequest,
    "/api/v1/create_model": types.CreateModelRequest,
    "/api/v1/get_info": types.GetInfoRequest,
    "/api/v1/unload_model": types.UnloadModelRequest,
    "/api/v1/optim_step": types.OptimStepRequest,
    "/api/v1/load_weights": types.LoadWeightsRequest,
    "/api/v1/save_weights": types.SaveWeightsRequest,
    "/api/v1/save_weights_for_sampler": types.SaveWeightsForSamplerRequest,
    "/api/v1/asample": types.SampleRequest,
    "/api/v1/retrieve_future": types.FutureRetrieveRequest,
    "/api/v1/telemetry": types.TelemetrySendRequest,
}
# Requests that change server state: a retry of one must carry the first try's idempotency key.
MUTATING = {
    "/api/v1/create_model", "/api/v1/optim_step", "/api/v1/load_weights", "/api/v1/save_weights",
    "/api/v1/save_weights_for_sampler", "/api/v1/asample", "/api/v1/forward_backward", "/api/v1/unload_model",
    "/api/v1/create_session", "/api/v1/create_sampling_session",
}


class Refused(Exception):
    """A request the SDK would not send; `status` is the HTTP answer (400 unless said), never retried."""

    def __init__(self, rule: str, detail: str, status: int = 400):
        super().__init__(f"{rule}: {detail}")
        self.rule, self.detail, self.status = rule, detail, status


def _accepts_none(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, UnionType) and NoneType in get_args(annotation)


def validate_json(path: str, body: Any) -> pydantic.BaseModel:
    """The SDK model of `path` built from `body`, or Refused naming the unknown / missing / mistyped field."""
    model = REQUEST_MODELS[path]
    if not isinstance(body, dict):
        raise Refused("json-body", f"{path} takes a JSON object, got {type(body).__name__}")
    # The SDK drops None-valued fields (exclude_none), so an absent Optional field means None.
    filled = dict(body)
    for name, info in model.model_fields.items():
        wire = info.validation_alias if isinstance(info.validation_alias, str) else name
        if name not in filled and wire not in filled and info.is_required() and _accepts_none(info.annotation):
            filled[name] = None
    try:
        request = model.model_validate(filled)
    except pydantic.ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, item['loc'])) or '(body)'}: {item['msg']}" for item in error.errors())
        raise Refused("sdk-schema", f"{model.__name__} rejects the body: {problems}") from error
    expected = request.model_dump(exclude_unset=False, exclude_none=True, mode="json")
    missing = sorted(set(expected) - set(body))
    if missing:
        raise Refused("sdk-fields", f"{model.__name__} is missing {missing}: the SDK always sends them")
    return request


def fingerprint(path: str, body: bytes) -> str:
    return hashlib.sha256(path.encode() + b"\0" + body).hexdigest()


@dataclass
class Ledger:
    """What has been applied: answers by idempotency key, and (key, body) by sequence id per model / sampling session."""

    answers: dict[str, tuple[str, int, dict, bytes]] = field(default_factory=dict)
    sequence_ids: dict[str, dict[int, tuple[str, str]]] = field(default_factory=dict)

    def replay(self, key: str, print_: str) -> tuple[int, dict, bytes] | None:
        """The stored answer of a retried POST (same key, same body), or None for a first try."""
        stored = self.answers.get(key)
        if stored is None:
            return None
        if stored[0] != print_:
            raise Refused("idempotency", f"X-Idempotency-Key {key} was first used for another request body")
        return stored[1], stored[2], stored[3]

    def remember(self, key: str, print_: str, status: int, headers: dict, body: bytes) -> None:
        self.answers[key] = (print_, status, headers, body)

    def claim_sequence(self, owner: str, seq_id: int | None, key: str, print_: str, retry_count: int, what: str) -> str | None:
        """Claim `owner`'s (a model's or a sampling session's) seq_id for this request. None: a first try, apply it.
        A key: the seq_id was already applied under that key with the same body — a retry, to be answered from the
        first try's answer, never applied twice. The SDK's transport retries reuse the key (x-stainless-retry-count
        > 0); its outer retries (execute_with_retries) send a new key with the same seq_id and a retry count of 0."""
        if seq_id is None:
            raise Refused("seq-id", f"{what} for {owner} has no seq_id (the SDK numbers every model request)")
        seen = self.sequence_ids.setdefault(owner, {})
        if seq_id not in seen:
            seen[seq_id] = (key, print_)
            return None
        first_key, first_print = seen[seq_id]
        if first_print != print_:
            raise Refused("seq-id-reuse", f"{what} seq_id {seq_id} of {owner} was already used for another request body")
        if retry_count > 0 and first_key != key:
            raise Refused(
                "retry-without-key",
                f"{what} seq_id {seq_id} of {owner} is retry {retry_count} of a POST first sent with X-Idempotency-Key "
                f"{first_key}, but carries {key}: a transport retry must reuse its first try's key",
            )
        return first_key

    def release(self, owner: str, seq_id: int) -> None:
        """A first try that failed before it was applied frees its seq_id."""
        self.sequence_ids.get(owner, {}).pop(seq_id, None)

    def stored(self, key: str) -> tuple[int, dict, bytes] | None:
        answer = self.answers.get(key)
        return None if answer is None else answer[1:]

    def first_request(self, model_id: str, seq_id: int, print_: str) -> bool:
        """Nothing applied to the model yet, or only this very request (a retry of it)."""
        seen = self.sequence_ids.get(model_id) or {}
        return not seen or (list(seen) == [seq_id] and seen[seq_id][1] == print_)
