/**
 * The protobuf messages against bytes the official SDK wrote (tinker 0.38.0, its own
 * `forward_backward_request_to_proto` / `tinker_public_pb2`; the scripts that printed them:
 * /tmp/h7golden.py and /tmp/h7golden2.py of the session, reproduced in the comments), and the
 * SDK's own decoding of its responses.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { readFields } from './protobuf-wire.ts';
import { decodeForwardBackwardOutput, decodeSampleResponse, encodeForwardBackward } from './tinker-proto.ts';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const bytesOf = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'hex'));

// ForwardBackwardRequest(model_id='s1:train:0', seq_id=1, loss_fn='ppo',
//   loss_fn_config={'clip_low_threshold': 0.8, 'clip_high_threshold': 1.28},
//   data=[Datum(model_input=[5,6,7], loss_fn_inputs={target_tokens: int64 [6,7,8], weights: float32 [1,0,-0.5]})])
const sdkForwardBackward =
  '0a0a73313a747261696e3a3010011a640a100a0e0a0c050000000600000007000000121e0a077765696768747312130a0c0000803f00000000000000bf180122010312300a0d7461726765745f746f6b656e73121f0a180600000000000000070000000000000008000000000000001802220103220370706f2a1d0a12636c69705f6c6f775f7468726573686f6c64119a9999999999e93f2a1e0a13636c69705f686967685f7468726573686f6c64117b14ae47e17af43f3a1f0a12636c69705f6c6f775f7468726573686f6c641209099a9999999999e93f3a200a13636c69705f686967685f7468726573686f6c641209097b14ae47e17af43f';
// The same with forward_only = true (field 6, between loss_fn_config and loss_fn_config_v2).
const sdkForward =
  '0a0a73313a747261696e3a3010011a640a100a0e0a0c050000000600000007000000121e0a077765696768747312130a0c0000803f00000000000000bf180122010312300a0d7461726765745f746f6b656e73121f0a180600000000000000070000000000000008000000000000001802220103220370706f2a1d0a12636c69705f6c6f775f7468726573686f6c64119a9999999999e93f2a1e0a13636c69705f686967685f7468726573686f6c64117b14ae47e17af43f30013a1f0a12636c69705f6c6f775f7468726573686f6c641209099a9999999999e93f3a200a13636c69705f686967685f7468726573686f6c641209097b14ae47e17af43f';

const request = (forwardOnly: boolean) => ({
  modelId: 's1:train:0',
  seqId: 1,
  lossFunction: 'ppo',
  lossConfig: { clip_low_threshold: 0.8, clip_high_threshold: 1.28 },
  forwardOnly,
  data: [
    {
      model_input: { chunks: [{ type: 'encoded_text' as const, tokens: [5, 6, 7] }] },
      // The SDK's map came out weights first; protobuf map order is free, this order gives identical bytes.
      loss_fn_inputs: {
        weights: { data: [1, 0, -0.5], dtype: 'float32' as const, shape: [3] },
        target_tokens: { data: [6, 7, 8], dtype: 'int64' as const, shape: [3] },
      },
    },
  ],
});

test('forward_backward and forward (forward_only) encode to the bytes the SDK sends', () => {
  assert.equal(hex(encodeForwardBackward(request(false))), sdkForwardBackward);
  assert.equal(hex(encodeForwardBackward(request(true))), sdkForward);
});

test("the SDK's SampleResponse decodes as the SDK decodes it (NaN prompt log-prob → null, stop reasons)", () => {
  // SampleResponse(sequences=[{STOP, [5,6,7], [-0.5,-1.25,-2]}, {LENGTH, [8], [-3]}], prompt_logprobs=[nan,-0.75,-1.5], prompt_cache_hit_tokens=2)
  const decoded = decodeSampleResponse(
    bytesOf(
      '0a1c120c0500000006000000070000001a0c000000bf0000a0bf000000c00a0e08011204080000001a04000040c0120c0000c07f000040bf0000c0bf2002',
    ),
  );
  assert.deepEqual(decoded, {
    sequences: [
      { tokens: [5, 6, 7], logprobs: [-0.5, -1.25, -2], stop_reason: 'stop' },
      { tokens: [8], logprobs: [-3], stop_reason: 'length' },
    ],
    prompt_logprobs: [null, -0.75, -1.5],
    prompt_cache_hit_tokens: 2,
  });
});

test("the SDK's ForwardBackwardOutput decodes per datum (byte offsets, bfloat16 widened, metrics)", () => {
  const decoded = decodeForwardBackwardOutput(
    bytesOf(
      '0a1874696e6b65722e74797065733a41727261795265636f72641283010a0178123c0a10656c656d656e74776973655f6c6f737312280a0ac03f00c0803e4040803f1218000000000000000006000000000000000a000000000000001804123e0a086c6f6770726f627312320a14000080bf000000c0000040c0000080c00000a0c0121800000000000000000c000000000000001400000000000000180118021a130a086c6f73733a73756d110000000000000440',
    ),
  );
  assert.equal(decoded.loss_fn_output_type, 'ArrayRecord');
  assert.deepEqual(
    decoded.loss_fn_outputs.map((datum) =>
      Object.fromEntries(Object.entries(datum).map(([name, value]) => [name, value.data])),
    ),
    [
      { elementwise_loss: [1.5, -2, 0.25], logprobs: [-1, -2, -3] },
      { elementwise_loss: [3, 1], logprobs: [-4, -5] },
    ],
  );
  assert.deepEqual(decoded.metrics, { 'loss:sum': 2.5 });
});

test('hostile bytes are a named error, never a hang or a wrong value', () => {
  assert.throws(() => readFields(new Uint8Array([0x0a, 0x05, 1])), InvalidArgumentError); // length past the end
  assert.throws(
    () => readFields(new Uint8Array([0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])),
    /varint/,
  );
  assert.throws(() => readFields(new Uint8Array([0x0b])), /wire type/);
  assert.throws(() => readFields(new Uint8Array([0x03])), /field number 0/);
  assert.throws(() => decodeSampleResponse(bytesOf('0a0312010a')), /whole number of int32/);
});
