/**
 * Absolute Zero expert: proposes a reference program with a fresh input, then answers the
 * executor's output. A random turn proposes the same way but solves with a random integer.
 */
import type { Observation, Rng } from '../../core/index.ts';
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData, requirePrivileged } from '../require-data.ts';
import type { AbsoluteZeroData, AbsoluteZeroPrivileged } from './env.ts';
import { randomInput, referencePrograms } from './programs.ts';

function propose(rng: Rng): string {
  const reference = rng.pick(referencePrograms);
  return formatAnswer(JSON.stringify({ program: reference.program, input: randomInput(reference.input, rng) }));
}

export function absoluteZeroExpert(options: ExpertOptions = {}): Expert {
  const data = (observation: Observation) => requireData<AbsoluteZeroData>(observation, 'absolute-zero', 'role');
  return makeExpert(
    options,
    (observation, rng) => {
      if (data(observation).proposal === null) return propose(rng);
      const { output } = requirePrivileged<AbsoluteZeroPrivileged>(observation, 'absolute-zero', 'output');
      return formatAnswer(JSON.stringify(output));
    },
    (observation, rng) =>
      data(observation).proposal === null ? propose(rng) : formatAnswer(String(rng.range(-10, 30))),
  );
}
