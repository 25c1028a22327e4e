/**
 * Negotiation expert (cooperative, for MAGRPO-style joint reward): proposes the split that
 * maximises the joint value, and accepts a proposal exactly when it is such a split. A random
 * turn proposes random counts or accepts.
 */
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData, requirePrivileged } from '../require-data.ts';
import type { NegotiationData, NegotiationPrivileged } from './env.ts';
import { bestSplit, maxJointValue, restOf, shareValue } from './game.ts';

export function negotiationExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { agent, proposal } = requireData<NegotiationData>(observation, 'negotiation', 'agent');
      const { task } = requirePrivileged<NegotiationPrivileged>(observation, 'negotiation', 'task');
      if (proposal !== null) {
        const rest = restOf(task, proposal.share);
        if (shareValue(task, proposal.by, proposal.share) + shareValue(task, agent, rest) === maxJointValue(task))
          return formatAnswer('accept');
      }
      return formatAnswer(`take ${bestSplit(task, agent).join(' ')}`);
    },
    (observation, rng) => {
      const { counts, proposal } = requireData<NegotiationData>(observation, 'negotiation', 'counts');
      if (proposal !== null && rng.next() < 0.3) return formatAnswer('accept');
      return formatAnswer(`take ${counts.map((count) => rng.range(0, count)).join(' ')}`);
    },
  );
}
