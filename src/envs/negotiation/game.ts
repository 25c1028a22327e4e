/**
 * The negotiation game (after Deal or No Deal, Lewis et al. 2017): a pool of three item types
 * with counts 1–3; each agent privately values each type with integers so its whole pool is
 * worth 10. Agents alternate proposals `take b h k` (what the proposer keeps; the rest goes to
 * the other) until one accepts the last proposal or the turns run out (no deal: both score 0).
 */
import type { Rng } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';

export const itemNames = ['books', 'hats', 'balls'] as const;
export const agentNames = ['Alice', 'Bob'] as const;

export interface NegotiationTask {
  counts: number[];
  /** values[agent][item]. */
  values: number[][];
}

export function generateNegotiation(rng: Rng): NegotiationTask {
  for (;;) {
    const counts = itemNames.map(() => rng.range(1, 3));
    const values = agentNames.map(() => valuation(rng, counts));
    if (values.every((v) => v !== null)) return { counts, values: values as number[][] };
  }
}

/** Random integer values with Σ counts·values = 10, or null after a few tries. */
function valuation(rng: Rng, counts: number[]): number[] | null {
  for (let attempt = 0; attempt < 100; attempt++) {
    const values = counts.slice(0, -1).map((count) => rng.range(0, Math.floor(10 / count)));
    const rest = 10 - values.reduce((sum, value, i) => sum + value * at(counts, i, 'item counts'), 0);
    const last = at(counts, counts.length - 1, 'item counts');
    if (rest >= 0 && rest % last === 0) return [...values, rest / last];
  }
  return null;
}

/** Value to `agent` of keeping `share` (per item type). */
export function shareValue(task: NegotiationTask, agent: number, share: readonly number[]): number {
  return share.reduce((sum, count, i) => sum + count * itemValue(task, agent, i), 0);
}

/** What `agent` values one item of type `item` at. */
export function itemValue(task: NegotiationTask, agent: number, item: number): number {
  return at(at(task.values, agent, 'agents'), item, 'item types');
}

/** What the other agent gets when the proposer keeps `share`. */
export function restOf(task: NegotiationTask, share: readonly number[]): number[] {
  return task.counts.map((count, i) => count - at(share, i, 'share'));
}

/** The largest possible sum of both agents' values (each item to whoever values it more). */
export function maxJointValue(task: NegotiationTask): number {
  return task.counts.reduce((sum, count, i) => sum + count * Math.max(itemValue(task, 0, i), itemValue(task, 1, i)), 0);
}

/** The proposer's share of a joint-value-maximising split (ties go to the proposer). */
export function bestSplit(task: NegotiationTask, proposer: number): number[] {
  const other = 1 - proposer;
  return task.counts.map((count, i) => (itemValue(task, proposer, i) >= itemValue(task, other, i) ? count : 0));
}
