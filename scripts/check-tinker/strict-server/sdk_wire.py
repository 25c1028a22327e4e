"""The protobuf half of the strict server, built on the tinker SDK's own schema (tinker.proto.tinker_public_pb2).

The SDK (tinker 0.38.0) POSTs /api/v1/forward_backward as a `ForwardBackwardRequest` protobuf (forward is the
same message with `forward_only = true`) and asks retrieve_future for `ForwardBackwardOutput` and
`SampleResponse` as protobuf (`Accept: application/x-protobuf`). SkyRL 0.3.0 speaks JSON only, so the strict
server decodes the request with the SDK's message class (unknown fields refused) into SkyRL's JSON, and encodes
SkyRL's JSON results into the SDK's response messages. The round trip is checked by the SDK's own decoders
(tinker.proto.response_conv) in the self-test.
"""

from __future__ import annotations

import math

import numpy as np
from google.protobuf import unknown_fields
from tinker.proto import tinker_public_pb2 as public_pb
from tinker.types.loss_fn_type import LossFnType
from typing import get_args

LOSS_FUNCTIONS = set(get_args(LossFnType))
_DTYPES = {public_pb.DTYPE_FLOAT32: ("float32", np.float32), public_pb.DTYPE_INT64: ("int64", np.int64)}


class WireError(ValueError):
    """A body the SDK would never send (named field and reason)."""


def _refuse_unknown(message, where: str) -> None:
    """Unknown protobuf fields are what a client built from another schema sends: refuse them, recursively."""
    unknown = unknown_fields.UnknownFieldSet(message)
    if len(unknown) > 0:
        numbers = sorted({field.field_number for field in unknown})
        raise WireError(f"{where}: unknown protobuf field number(s) {numbers} (not in tinker 0.38.0's schema)")
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        if descriptor.message_type.GetOptions().map_entry:
            if descriptor.message_type.fields_by_name["value"].message_type is not None:
                for key, item in value.items():
                    _refuse_unknown(item, f"{where}.{descriptor.name}[{key}]")
        elif descriptor.is_repeated:
            for index, item in enumerate(value):
                _refuse_unknown(item, f"{where}.{descriptor.name}[{index}]")
        else:
            _refuse_unknown(value, f"{where}.{descriptor.name}")


def _tensor_to_json(tensor, where: str) -> dict:
    if tensor.dtype not in _DTYPES:
        raise WireError(f"{where}: dtype {tensor.dtype} is not float32 or int64 (the SDK writes only these)")
    if tensor.HasField("sparse_csr"):
        raise WireError(f"{where}: sparse tensors are not forwarded (SkyRL 0.3.0 takes dense data)")
    name, numpy_type = _DTYPES[tensor.dtype]
    if len(tensor.dense) % np.dtype(numpy_type).itemsize != 0:
        raise WireError(f"{where}: {len(tensor.dense)} bytes is not a whole number of {name} values")
    data = np.frombuffer(tensor.dense, dtype=numpy_type)
    shape = list(tensor.shape) or [int(data.size)]
    if math.prod(shape) != data.size:
        raise WireError(f"{where}: shape {shape} does not hold {data.size} values")
    return {"data": data.tolist(), "dtype": name, "shape": shape}


def decode_forward_backward(body: bytes) -> tuple[dict, bool, dict]:
    """(SkyRL JSON input, forward_only, summary for the log) from the SDK's protobuf body."""
    message = public_pb.ForwardBackwardRequest()
    try:
        message.ParseFromString(body)
    except Exception as error:  # protobuf raises DecodeError, a plain Exception subclass
        raise WireError(f"forward_backward: not a ForwardBackwardRequest protobuf ({error})") from error
    _refuse_unknown(message, "ForwardBackwardRequest")
    if not message.model_id:
        raise WireError("ForwardBackwardRequest.model_id is missing")
    if message.seq_id < 1:
        raise WireError(f"ForwardBackwardRequest.seq_id is {message.seq_id}: the SDK numbers a model's requests from 1")
    if message.loss_fn not in LOSS_FUNCTIONS:
        raise WireError(f"ForwardBackwardRequest.loss_fn {message.loss_fn!r} is not one of {sorted(LOSS_FUNCTIONS)}")
    data, tokens = [], 0
    for index, datum in enumerate(message.data):
        chunks = []
        for chunk_index, chunk in enumerate(datum.model_input):
            if chunk.WhichOneof("chunk") != "encoded_text":
                raise WireError(f"data[{index}].model_input[{chunk_index}]: only encoded_text chunks are forwarded")
            if len(chunk.encoded_text.tokens) % 4 != 0:
                raise WireError(f"data[{index}].model_input[{chunk_index}]: tokens are not int32 little-endian bytes")
            ids = np.frombuffer(chunk.encoded_text.tokens, dtype="<i4").tolist()
            tokens += len(ids)
            chunks.append({"type": "encoded_text", "tokens": ids})
        inputs = {name: _tensor_to_json(tensor, f"data[{index}].loss_fn_inputs[{name}]") for name, tensor in datum.loss_fn_inputs.items()}
        data.append({"model_input": {"chunks": chunks}, "loss_fn_inputs": inputs})
    if not data:
        raise WireError("ForwardBackwardRequest.data is empty (the SDK refuses 'No data provided')")
    config = {key: value.number for key, value in message.loss_fn_config_v2.items() if value.WhichOneof("value") == "number"}
    for key, value in message.loss_fn_config.items():
        if key in config and config[key] != value:
            raise WireError(f"loss_fn_config[{key}] = {value} but loss_fn_config_v2[{key}] = {config[key]} (the SDK dual-writes the same value)")
        config[key] = value
    skyrl_input = {"data": data, "loss_fn": message.loss_fn, "loss_fn_config": config or None}
    summary = {"model_id": message.model_id, "seq_id": message.seq_id, "loss_fn": message.loss_fn, "forward_only": message.forward_only, "datums": len(data), "tokens": tokens}
    return skyrl_input, message.forward_only, summary


def _batched(values: list[list], numpy_type) -> public_pb.BatchedTensor:
    arrays = [np.asarray(value, dtype=numpy_type).ravel() for value in values]
    offsets = np.cumsum([0] + [array.nbytes for array in arrays]).astype(np.int64)
    dtype = public_pb.DTYPE_FLOAT32 if numpy_type == np.float32 else public_pb.DTYPE_INT64
    return public_pb.BatchedTensor(dtype=dtype, data=b"".join(array.tobytes() for array in arrays), offsets=offsets.tobytes())


def encode_forward_backward_output(result: dict) -> bytes:
    """SkyRL's JSON ForwardBackwardOutput as the SDK's protobuf (one ArrayRecord, as the SDK's v1 reader expects)."""
    outputs = result.get("loss_fn_outputs") or []
    message = public_pb.ForwardBackwardOutput(loss_fn_output_type=result.get("loss_fn_output_type") or "ArrayRecord")
    for key, value in (result.get("metrics") or {}).items():
        message.metrics[key] = float(value)
    if outputs:
        record = message.loss_fn_outputs.add(num_datums=len(outputs))
        for name in outputs[0]:
            dtype = outputs[0][name].get("dtype", "float32")
            numpy_type = np.int64 if dtype == "int64" else np.float32
            record.fields[name].CopyFrom(_batched([output[name]["data"] for output in outputs], numpy_type))
    return message.SerializeToString()


def encode_sample_response(result: dict) -> bytes:
    """SkyRL's JSON SampleOutput as the SDK's SampleResponse protobuf (tokens int32, log-probs float32 bytes)."""
    message = public_pb.SampleResponse()
    stops = {"stop": public_pb.STOP_REASON_STOP, "length": public_pb.STOP_REASON_LENGTH}
    for sequence in result.get("sequences") or []:
        message.sequences.add(
            tokens=np.asarray(sequence["tokens"], dtype="<i4").tobytes(),
            logprobs=np.asarray(sequence.get("logprobs") or [], dtype="<f4").tobytes(),
            stop_reason=stops[sequence["stop_reason"]],
        )
    prompt = result.get("prompt_logprobs")
    if prompt:
        message.prompt_logprobs = np.asarray([math.nan if value is None else value for value in prompt], dtype="<f4").tobytes()
    return message.SerializeToString()
