/**
 * The advantages an update trained on, laid onto each trajectory's full token sequence (for run
 * stores and exports). Whole-conversation samples are the trajectories themselves; bounded-history
 * samples are one per turn (in trajectory order), and a turn's advantage — the same on all its
 * generated tokens — goes onto that turn's generated span [start, end) of the trajectory.
 */
import { at } from '../core/indexing.ts';
import type { Trajectory } from '../core/types.ts';

export interface AdvantageSample {
  lossMask: ArrayLike<number>;
  advantages: ArrayLike<number>;
}

export function trajectoryAdvantages(
  trajectories: readonly Trajectory[],
  samples: readonly AdvantageSample[],
): Float64Array[] {
  let cursor = 0;
  return trajectories.map((trajectory) => {
    const out = new Float64Array(trajectory.tokens.length);
    if (trajectory.segments === undefined) {
      const sample = at(samples, cursor++, 'advantage samples');
      for (let i = 0; i < out.length; i++)
        out[i] = trajectory.lossMask[i] === 1 ? at(sample.advantages, i, 'sample advantages') : 0;
      return out;
    }
    for (const segment of trajectory.segments) {
      const sample = at(samples, cursor++, 'advantage samples');
      const first = Array.prototype.indexOf.call(sample.lossMask, 1);
      const value = first < 0 ? 0 : at(sample.advantages, first, 'sample advantages');
      const turn = at(trajectory.turns, segment.turn, 'turns');
      for (let i = turn.start; i < turn.end; i++) if (trajectory.lossMask[i] === 1) out[i] = value;
    }
    return out;
  });
}
