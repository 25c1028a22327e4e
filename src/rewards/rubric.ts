/**
 * `rubric(rewards, weights)`: the weighted sum of named rewards, R = Σ_i w_i · r_i, with every
 * component r_i kept under its name (verifiers' `Rubric`). A component that throws or returns a
 * non-finite number is a failure: the score says which and why (`ok: false`), and the caller
 * counts it and leaves the episode (or its group) out — it is never silently scored 0.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { RewardComponentsSpec, RewardKind } from '../core/types.ts';
import { type AnyReward, isGroupReward } from './reward.ts';

export type RubricScore =
  | { ok: true; total: number; components: Record<string, number> }
  | { ok: false; components: Record<string, number>; failures: Record<string, string> };

/** Also an env's `RewardComponentsSpec`: names, weights, kinds. */
export interface Rubric<C> extends RewardComponentsSpec {
  readonly names: readonly string[];
  readonly weights: Readonly<Record<string, number>>;
  readonly kinds: Readonly<Record<string, RewardKind>>;
  /** The rewards, in order (the trainer reads judges' token usage from them: judges/judge-usage.ts). */
  readonly rewards: readonly AnyReward<C>[];
  /** Scores one context; a group reward is scored on a group of one. */
  score(context: C): Promise<RubricScore>;
  /** Scores one task's contexts together (group rewards see the whole group), one score per context. */
  scoreGroup(contexts: readonly C[]): Promise<RubricScore[]>;
}

/** `weights`: one per reward in order, or by name; default 1 each. */
export function rubric<C>(
  rewards: readonly AnyReward<C>[],
  weights: readonly number[] | Readonly<Record<string, number>> = {},
): Rubric<C> {
  if (rewards.length === 0) throw new InvalidArgumentError('rubric: give at least one reward');
  const names = rewards.map((r) => r.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined) throw new InvalidArgumentError(`rubric: reward name ${duplicate} appears twice`);
  const weightOf = resolveWeights(names, weights);
  const kinds = Object.fromEntries(rewards.map((r) => [r.name, r.kind]));
  const scoreGroup = async (contexts: readonly C[]): Promise<RubricScore[]> => {
    const columns = await Promise.all(rewards.map((r) => componentColumn(r, contexts)));
    return contexts.map((_, i) => combine(names, columns, i, weightOf));
  };
  return {
    names,
    rewards,
    weights: weightOf,
    kinds,
    scoreGroup,
    score: async (context) => {
      const [only] = await scoreGroup([context]);
      if (only === undefined) throw new InvalidArgumentError('rubric: scored no context');
      return only;
    },
  };
}

function resolveWeights(
  names: readonly string[],
  weights: readonly number[] | Readonly<Record<string, number>>,
): Record<string, number> {
  if (Array.isArray(weights) && weights.length !== names.length) {
    throw new InvalidArgumentError(
      `rubric: ${weights.length} weights for ${names.length} rewards (${names.join(', ')})`,
    );
  }
  const byName: Readonly<Record<string, number>> = Array.isArray(weights)
    ? Object.fromEntries(names.map((name, i) => [name, weights[i] ?? 1]))
    : (weights as Readonly<Record<string, number>>);
  for (const key of Object.keys(byName)) {
    if (!names.includes(key))
      throw new InvalidArgumentError(`rubric: weight for ${key}, which is not one of ${names.join(', ')}`);
  }
  const resolved = Object.fromEntries(names.map((name) => [name, byName[name] ?? 1]));
  for (const [name, weight] of Object.entries(resolved)) {
    if (!Number.isFinite(weight)) throw new InvalidArgumentError(`rubric: weight of ${name} is ${weight}, not finite`);
  }
  return resolved;
}

/** One reward's values over the contexts: a number, or the reason it failed, per context. */
type Column = readonly (number | { failure: string })[];

async function componentColumn<C>(candidate: AnyReward<C>, contexts: readonly C[]): Promise<Column> {
  if (isGroupReward(candidate)) {
    try {
      const values = await candidate.scoreGroup(contexts);
      if (values.length !== contexts.length) {
        const failure = `returned ${values.length} scores for a group of ${contexts.length}`;
        return contexts.map(() => ({ failure }));
      }
      return values.map(checked);
    } catch (error) {
      const failure = reason(error);
      return contexts.map(() => ({ failure }));
    }
  }
  return Promise.all(
    contexts.map(async (context) => {
      try {
        return checked(await candidate(context));
      } catch (error) {
        return { failure: reason(error) };
      }
    }),
  );
}

function checked(value: number): number | { failure: string } {
  return typeof value === 'number' && Number.isFinite(value)
    ? value
    : { failure: `returned ${String(value)}, not a finite number` };
}

function reason(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function combine(
  names: readonly string[],
  columns: readonly Column[],
  index: number,
  weightOf: Readonly<Record<string, number>>,
): RubricScore {
  const components: Record<string, number> = {};
  const failures: Record<string, string> = {};
  let total = 0;
  names.forEach((name, k) => {
    const value = columns[k]?.[index];
    if (typeof value === 'number') {
      components[name] = value;
      total += (weightOf[name] ?? 1) * value;
    } else {
      failures[name] = value?.failure ?? 'no score';
    }
  });
  return Object.keys(failures).length > 0 ? { ok: false, components, failures } : { ok: true, total, components };
}
