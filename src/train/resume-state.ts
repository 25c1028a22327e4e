/**
 * What a run store's checkpoint row holds to resume training: the policy's own state bytes
 * (`TrainablePolicy.saveState`: weights, optimizer moments, step counter — whatever the backend
 * needs) and the RL trainer's state (iteration, minibatch-shuffle RNG), in one envelope:
 *
 *   "agentrl-resume-1\n"  uint32 LE header length  header JSON { backend, rl? }  policy state bytes
 *
 * Rows written before the envelope hold the built-in state blob itself, with the RL state in its
 * safetensors metadata; they still read (`policyState` is then the whole blob).
 */
import { CheckpointError } from '../core/errors.ts';
import { parseSafetensors } from '../model/safetensors.ts';
import type { RlResumeState } from './rl.ts';

const magic = new TextEncoder().encode('agentrl-resume-1\n');

export interface ResumeState {
  /** The backend that wrote `policyState` ('builtin', 'tinker'); undefined for rows written before the envelope. */
  backend?: string;
  policyState: Uint8Array;
  rl?: RlResumeState;
}

export function encodeResumeState({ backend, policyState, rl }: ResumeState): Uint8Array {
  const header = new TextEncoder().encode(JSON.stringify({ backend, rl }));
  const bytes = new Uint8Array(magic.length + 4 + header.length + policyState.length);
  bytes.set(magic, 0);
  new DataView(bytes.buffer).setUint32(magic.length, header.length, true);
  bytes.set(header, magic.length + 4);
  bytes.set(policyState, magic.length + 4 + header.length);
  return bytes;
}

export function decodeResumeState(bytes: Uint8Array, { source = '<memory>' }: { source?: string } = {}): ResumeState {
  if (!magic.every((byte, i) => bytes[i] === byte)) {
    // A row written before the envelope: the built-in state blob, the RL state in its metadata.
    const { metadata } = parseSafetensors(bytes, { file: source });
    return {
      policyState: bytes,
      rl: metadata.rl === undefined ? undefined : (JSON.parse(metadata.rl) as RlResumeState),
    };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(magic.length, true);
  const start = magic.length + 4;
  if (start + length > bytes.length) throw new CheckpointError(`${source}: the resume state is cut short`, { source });
  let header: { backend?: string; rl?: RlResumeState };
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(start, start + length))) as typeof header;
  } catch (error) {
    throw new CheckpointError(`${source}: the resume state's header is not JSON (${(error as Error).message})`, {
      source,
    });
  }
  return { backend: header.backend, rl: header.rl, policyState: bytes.slice(start + length) };
}
