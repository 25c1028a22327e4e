/**
 * A multi-agent run's resumable state in one byte string (what a run store's checkpoint row
 * holds): every trainer's own `saveState` bytes by trainer name, the league snapshots' bytes by id,
 * and the trainer state (iteration, each trainer's RNG, the league's records):
 *
 *   "agentrl-roles-1\n"  uint32 LE header length  header JSON { state, blobs: [{ kind, name, length }] }  blob bytes…
 *
 * A LoRA role's bytes hold its adapters and moments only (the base is shared and not repeated).
 */
import { CheckpointError } from '../../core/errors.ts';
import type { MultiAgentCheckpoint, MultiAgentResumeState } from './run-multi-agent-rl.ts';

const magic = new TextEncoder().encode('agentrl-roles-1\n');

export interface RoleCheckpoint extends MultiAgentCheckpoint {
  /** Each trainer's `saveState` bytes, by trainer name. */
  trainers: ReadonlyMap<string, Uint8Array>;
}

interface BlobEntry {
  kind: 'trainer' | 'snapshot';
  name: string;
  length: number;
}

export function encodeRoleCheckpoint({ trainers, snapshots, state }: RoleCheckpoint): Uint8Array {
  const blobs: { entry: BlobEntry; bytes: Uint8Array }[] = [
    ...[...trainers].map(([name, bytes]) => ({
      entry: { kind: 'trainer' as const, name, length: bytes.length },
      bytes,
    })),
    ...[...snapshots].map(([name, bytes]) => ({
      entry: { kind: 'snapshot' as const, name, length: bytes.length },
      bytes,
    })),
  ];
  const header = new TextEncoder().encode(JSON.stringify({ state, blobs: blobs.map((blob) => blob.entry) }));
  const total = magic.length + 4 + header.length + blobs.reduce((sum, blob) => sum + blob.bytes.length, 0);
  const out = new Uint8Array(total);
  out.set(magic, 0);
  new DataView(out.buffer).setUint32(magic.length, header.length, true);
  out.set(header, magic.length + 4);
  let offset = magic.length + 4 + header.length;
  for (const { bytes } of blobs) {
    out.set(bytes, offset);
    offset += bytes.length;
  }
  return out;
}

export function isRoleCheckpoint(bytes: Uint8Array): boolean {
  return bytes.length >= magic.length && magic.every((byte, i) => bytes[i] === byte);
}

export function decodeRoleCheckpoint(bytes: Uint8Array, { source = '<memory>' } = {}): RoleCheckpoint {
  if (!isRoleCheckpoint(bytes))
    throw new CheckpointError(`${source}: not a multi-agent checkpoint (no agentrl-roles-1 header)`, { source });
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < magic.length + 4) throw new CheckpointError(`${source}: the checkpoint is cut short`, { source });
  const length = view.getUint32(magic.length, true);
  let offset = magic.length + 4 + length;
  if (offset > bytes.length) throw new CheckpointError(`${source}: the checkpoint is cut short`, { source });
  let header: { state: MultiAgentResumeState; blobs: BlobEntry[] };
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(magic.length + 4, offset))) as typeof header;
  } catch (error) {
    throw new CheckpointError(`${source}: the checkpoint header is not JSON (${(error as Error).message})`, { source });
  }
  const trainers = new Map<string, Uint8Array>();
  const snapshots = new Map<string, Uint8Array>();
  for (const entry of header.blobs ?? []) {
    if (!Number.isInteger(entry.length) || entry.length < 0 || offset + entry.length > bytes.length)
      throw new CheckpointError(`${source}: blob ${entry.name} runs past the end of the checkpoint`, { source });
    const blob = bytes.slice(offset, offset + entry.length);
    (entry.kind === 'trainer' ? trainers : snapshots).set(entry.name, blob);
    offset += entry.length;
  }
  if (offset !== bytes.length)
    throw new CheckpointError(`${source}: ${bytes.length - offset} bytes after the last blob`, { source });
  return { state: header.state, trainers, snapshots };
}
