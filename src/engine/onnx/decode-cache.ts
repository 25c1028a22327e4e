/**
 * The host-side KV cache of onnx-generate.ts: per layer [B, KV, slots, hd] keys and values, the
 * slots a run attends. It starts at the prompt plus one chunk and grows by chunks as tokens are
 * decoded (each growth copies the filled slots once), so a decode run attends about the filled
 * slots instead of the whole P + maxNew window from its first step: at batch 64, 32-token prompts
 * and 128 new tokens, the attention matmuls of the last step were a quarter of its time.
 *
 * A run returns only the new tokens' keys/values [rows, KV, T, hd]; `write` places them, and can
 * place one output row into several cache rows (rows that share a prompt, prefilled once).
 */
import { at, entry } from '../../core/indexing.ts';
import type { HostArray } from './session.ts';
import { keyOutputName, valueOutputName } from './model-graph.ts';

/** Slots added per growth (a decode run attends at most this many unwritten slots). */
export const CACHE_CHUNK = 32;

export interface CacheShape {
  layers: number;
  rows: number;
  kvHeads: number;
  headDimension: number;
}

export class DecodeCache {
  keys: Float32Array[];
  values: Float32Array[];

  constructor(
    private shape: CacheShape,
    /** Slots each row holds now. */
    public slots: number,
    /** The most slots it may grow to. */
    readonly maxSlots: number,
  ) {
    const size = shape.rows * shape.kvHeads * slots * shape.headDimension;
    this.keys = Array.from({ length: shape.layers }, () => new Float32Array(size));
    this.values = Array.from({ length: shape.layers }, () => new Float32Array(size));
  }

  /** Makes room for slot `slot` (grows by CACHE_CHUNK, at most to maxSlots); returns whether it grew. */
  ensure(slot: number): boolean {
    if (slot < this.slots) return false;
    const next = Math.min(this.maxSlots, Math.max(slot + 1, this.slots + CACHE_CHUNK));
    const { rows, kvHeads, headDimension: hd } = this.shape;
    const grow = (old: Float32Array): Float32Array => {
      const fresh = new Float32Array(rows * kvHeads * next * hd);
      for (let r = 0; r < rows * kvHeads; r++)
        fresh.set(old.subarray(r * this.slots * hd, (r + 1) * this.slots * hd), r * next * hd);
      return fresh;
    };
    this.keys = this.keys.map(grow);
    this.values = this.values.map(grow);
    this.slots = next;
    return true;
  }

  /** Keeps only cache rows `rows` (in that order): finished rows leave the decode runs. */
  keepRows(rows: readonly number[]): void {
    const { kvHeads, headDimension: hd } = this.shape;
    const span = kvHeads * this.slots * hd;
    const keep = (old: Float32Array): Float32Array => {
      const fresh = new Float32Array(rows.length * span);
      rows.forEach((row, r) => {
        fresh.set(old.subarray(row * span, (row + 1) * span), r * span);
      });
      return fresh;
    };
    this.keys = this.keys.map(keep);
    this.values = this.values.map(keep);
    this.shape = { ...this.shape, rows: rows.length };
  }

  /**
   * Writes a run's new keys/values of every layer: output row r (of `targets.length`) holds
   * `tokens` tokens, written into slots [start, start + tokens) of each cache row in targets[r].
   */
  write(
    out: Readonly<Record<string, { data: HostArray }>>,
    targets: readonly (readonly number[])[],
    { tokens, start }: { tokens: number; start: number },
  ): void {
    const { kvHeads, headDimension: hd } = this.shape;
    const span = tokens * hd;
    for (let layer = 0; layer < this.shape.layers; layer++) {
      const keys = entry(out, keyOutputName(layer), 'run output').data as Float32Array;
      const values = entry(out, valueOutputName(layer), 'run output').data as Float32Array;
      const cachedKeys = at(this.keys, layer, 'cache keys');
      const cachedValues = at(this.values, layer, 'cache values');
      targets.forEach((rows, r) => {
        for (let h = 0; h < kvHeads; h++) {
          const from = (r * kvHeads + h) * span;
          const keyRows = keys.subarray(from, from + span);
          const valueRows = values.subarray(from, from + span);
          for (const row of rows) {
            const to = ((row * kvHeads + h) * this.slots + start) * hd;
            cachedKeys.set(keyRows, to);
            cachedValues.set(valueRows, to);
          }
        }
      });
    }
  }
}

/**
 * The decode runs' attention bias [B, 1, 1, slots + 1]: row b attends its filled slots
 * [offset_b, filled) and the new token (the last column); every other slot is masked.
 */
export class DecodeBias {
  data: Float32Array = new Float32Array(0);
  private width = 0;

  constructor(
    private readonly offsets: readonly number[],
    private readonly masked: number,
  ) {}

  /** Rebuilt for a new slot count (after the cache grew), with slots [offset_b, filled) open. */
  reset(slots: number, filled: number): void {
    this.width = slots + 1;
    this.data = new Float32Array(this.offsets.length * this.width).fill(this.masked);
    this.offsets.forEach((offset, b) => {
      this.data.fill(0, b * this.width + offset, b * this.width + filled);
      this.data[b * this.width + slots] = 0; // the new token itself
    });
  }

  /** Opens slot `slot` in every row (its keys/values were just written). */
  open(slot: number): void {
    for (let b = 0; b < this.offsets.length; b++) this.data[b * this.width + slot] = 0;
  }
}
