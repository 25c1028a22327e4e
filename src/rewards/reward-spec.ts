/**
 * `agentrl train --reward <spec>`: the rubric a run trains on, as text.
 *
 * - `name=weight,name=weight,…` over the built-in rewards (builtin-rewards.ts); a name without
 *   `=weight` weighs 1: `--reward envSuccess=1,actionFormat=0.1,overlong=0.5`.
 * - a path to a module (`./my-rubric.ts`, `/abs/rubric.mjs`) whose default export is a `Rubric`
 *   over `EpisodeContext` (made with `rubric([...], weights)`).
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InvalidArgumentError } from '../core/errors.ts';
import type { EpisodeContext } from './episode-context.ts';
import type { RewardFunction } from './reward.ts';
import { type Rubric, rubric } from './rubric.ts';

/** A spec that names a module rather than built-in rewards. */
export function isRubricModulePath(spec: string): boolean {
  return /[/\\]/.test(spec) || /\.(m?[jt]s|cjs)$/.test(spec);
}

/** `name=weight,…` over `builtins`; an unknown name, a bad weight or a repeated name is an InvalidArgumentError naming the built-ins. */
export function rubricFromSpec(
  spec: string,
  builtins: Readonly<Record<string, RewardFunction<EpisodeContext>>>,
): Rubric<EpisodeContext> {
  const known = Object.keys(builtins);
  const entries = spec
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (entries.length === 0)
    throw new InvalidArgumentError(
      `--reward is empty: give name=weight,… over the built-in rewards (${known.join(', ')}) or a module path`,
    );
  const rewards: RewardFunction<EpisodeContext>[] = [];
  const weights: Record<string, number> = {};
  for (const entry of entries) {
    const [name = '', weightText] = entry.split('=', 2).map((s) => s.trim());
    const builtin = Object.hasOwn(builtins, name) ? builtins[name] : undefined;
    if (builtin === undefined)
      throw new InvalidArgumentError(
        `--reward: unknown reward "${name}"; the built-in rewards are ${known.join(', ')} (or give a module path)`,
        {
          reward: name,
          known,
        },
      );
    const weight = weightText === undefined ? 1 : Number(weightText);
    if (weightText === '' || !Number.isFinite(weight))
      throw new InvalidArgumentError(`--reward: the weight of ${name} is "${weightText}", not a finite number`, {
        reward: name,
      });
    if (name in weights) throw new InvalidArgumentError(`--reward: ${name} is given twice`, { reward: name });
    rewards.push(builtin);
    weights[name] = weight;
  }
  return rubric(rewards, weights);
}

/** The default export of the module at `path` (relative to `cwd`), checked to be a Rubric. */
export async function loadRubricModule(path: string, cwd: string = process.cwd()): Promise<Rubric<EpisodeContext>> {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw new InvalidArgumentError(`--reward ${path}: cannot load the module (${(error as Error).message})`, {
      path: file,
    });
  }
  const candidate = module.default;
  if (!isRubric(candidate))
    throw new InvalidArgumentError(
      `--reward ${path}: the module's default export is not a rubric (export default rubric([...], weights) from 'agentrl/rewards')`,
      { path: file },
    );
  return candidate;
}

function isRubric(value: unknown): value is Rubric<EpisodeContext> {
  const r = value as Partial<Rubric<EpisodeContext>> | undefined;
  return (
    typeof r === 'object' &&
    r !== null &&
    Array.isArray(r.names) &&
    typeof r.weights === 'object' &&
    typeof r.kinds === 'object' &&
    typeof r.scoreGroup === 'function' &&
    typeof r.score === 'function'
  );
}

/** The rubric `spec` names: a module's, or the built-ins'. */
export async function resolveRewardSpec(
  spec: string,
  builtins: Readonly<Record<string, RewardFunction<EpisodeContext>>>,
  cwd?: string,
): Promise<Rubric<EpisodeContext>> {
  return isRubricModulePath(spec) ? loadRubricModule(spec, cwd) : rubricFromSpec(spec, builtins);
}
