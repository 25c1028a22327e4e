/**
 * A reward is a plain named function (DESIGN.md `src/rewards/`, STYLE.md principle 3, as in the
 * verifiers library): `(context) => number | Promise<number>`. Its name is its metric key
 * (`reward/<name>` per iteration, and per trajectory in the run store); its kind says what it
 * pays for, so the reward-hacking monitor can tell reward earned by format terms alone.
 *
 * A group reward scores the episodes of one task against each other (a relative judge in the manner
 * of ART's RULER): one call per group, one number per episode, in order.
 *
 * The context type is the caller's: an env scores a step from its own state, the trainer scores a
 * finished episode from an `EpisodeContext` (rubric.ts).
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { RewardKind } from '../core/types.ts';

export type { RewardKind };

export const rewardKinds: readonly RewardKind[] = ['outcome', 'format', 'shaping', 'penalty', 'judge'];

/** Scores one context. `name` (the function's own name) is the metric key. */
export interface RewardFunction<C> {
  (context: C): number | Promise<number>;
  readonly name: string;
  readonly kind: RewardKind;
}

/** Scores a group of contexts (one task's episodes) relative to each other: one number per context, in order. */
export interface GroupReward<C> {
  readonly name: string;
  readonly kind: RewardKind;
  readonly scope: 'group';
  scoreGroup(contexts: readonly C[]): Promise<readonly number[]>;
}

export type AnyReward<C> = RewardFunction<C> | GroupReward<C>;

/** Metric-key safe: letters, digits, `_` and `-`, starting with a lower-case letter (`reward/<name>`; camelCase as the other metric keys). */
const rewardNamePattern = /^[a-z][A-Za-z0-9_-]{0,63}$/;

export function checkRewardName(name: string): string {
  if (!rewardNamePattern.test(name)) {
    throw new InvalidArgumentError(
      `reward name ${JSON.stringify(name)}: use 1–64 characters of a-z, A-Z, 0-9, '_' or '-', starting with a lower-case letter (it is a metric key)`,
    );
  }
  return name;
}

/** Names a reward function: `reward('correct', (c) => (c.answer === c.expected ? 1 : 0))`. */
export function reward<C>(
  name: string,
  score: (context: C) => number | Promise<number>,
  { kind = 'outcome' }: { kind?: RewardKind } = {},
): RewardFunction<C> {
  checkRewardName(name);
  const named = (context: C) => score(context);
  Object.defineProperty(named, 'name', { value: name });
  Object.defineProperty(named, 'kind', { value: kind, enumerable: true });
  return named as RewardFunction<C>;
}

/** Names a group reward: `groupReward('ruler', async (contexts) => judge.rank(contexts), { kind: 'judge' })`. */
export function groupReward<C>(
  name: string,
  scoreGroup: (contexts: readonly C[]) => Promise<readonly number[]>,
  { kind = 'judge' }: { kind?: RewardKind } = {},
): GroupReward<C> {
  return { name: checkRewardName(name), kind, scope: 'group', scoreGroup };
}

export function isGroupReward<C>(candidate: AnyReward<C>): candidate is GroupReward<C> {
  return typeof candidate === 'object' && candidate.scope === 'group';
}
