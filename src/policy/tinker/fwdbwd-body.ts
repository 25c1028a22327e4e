/**
 * The body of a protobuf forward_backward as tinker 0.38.0 sends it (`resources/training.py`):
 * zstd-compressed with `Content-Encoding: zstd` when the server's client/config says
 * `proto_compress_fwdbwd` ("real fwd/bwd payloads compress >10×"), else as is.
 *
 * agentrl compresses with node:zlib's zstd, which Node has from 22.15 / 23.8; on Node 20 (this
 * package's floor) there is none, and a zstd encoder would be a new dependency (npm has WASM
 * builds) — so there the body goes uncompressed and without Content-Encoding, exactly what the
 * SDK sends when the flag is false and what the server accepts from every SDK before the flag
 * (its ASGI middleware decompresses only a body that says it is compressed). The price is the
 * bandwidth the compression would save, not correctness.
 */
import * as zlib from 'node:zlib';
import type { SubmitBody } from './tinker-client.ts';

type Compress = (bytes: Uint8Array) => Uint8Array;

/** node:zlib's zstd compressor, when this Node has one (22.15+); undefined on Node 20. */
export const nodeZstd: Compress | undefined = (zlib as { zstdCompressSync?: Compress }).zstdCompressSync;

/** The forward_backward body: zstd when the server asks and `compress` exists (null: none; see the header). */
export function forwardBackwardBody(
  protobuf: Uint8Array,
  { serverAsks, compress = nodeZstd }: { serverAsks: boolean; compress?: Compress | null },
): SubmitBody {
  if (!serverAsks || compress === undefined || compress === null) return { protobuf };
  return { protobuf: new Uint8Array(compress(protobuf)), headers: { 'content-encoding': 'zstd' } };
}
