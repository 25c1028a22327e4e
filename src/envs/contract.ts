/**
 * The contract every environment runs (see STYLE.md "Contract tests"):
 * - reset gives a compact observation, the env has instructions, tools have zod schemas;
 * - the same seed and the same actions replay the same episode (observations, rewards, flags);
 * - every step's reward is Σ weights · components of the env's declared `rewardComponents`
 *   (reward-components-check.ts);
 * - a malformed action gives an observation with `info.invalidAction = true` and the configured
 *   reward (minus the format penalty), never an exception; repeated ones end the episode;
 * - an action over the env's size limit (4 MB here; every limit is far below) is an invalid turn
 *   read no further, answered in well under a second (docs/action-limits.md);
 * - `step` before `reset` rejects with `EpisodeNotStartedError`, after the end with `EpisodeEndedError`;
 * - the scripted expert solves the tasks of the given seeds.
 *
 *   envContract('frozen-lake', () => makeFrozenLake(), { makeExpert: frozenLakeExpert });
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EpisodeEndedError, EpisodeNotStartedError, type Env, type StepResult } from '../core/index.ts';
import { at } from '../core/indexing.ts';
import type { Expert, ExpertOptions } from './expert.ts';
import { assertStepRewardComponents } from './reward-components-check.ts';
import { splitSeeds } from './split.ts';

export interface EnvContractOptions {
  /** The env's scripted expert. */
  makeExpert: (options?: ExpertOptions) => Expert;
  /** Seeds the checks use. Default: the first 5 test-split seeds. */
  seeds?: number[];
  /** Malformed actions tried on top of the built-in ones. */
  invalidActions?: string[];
  /** Reward of an invalid turn (−formatPenalty of the env made by `makeEnv`). Default 0. */
  invalidActionReward?: number;
  /** Largest observation text, in UTF-8 bytes. Default 512. */
  maxObservationBytes?: number;
  /** An episode must end within this many turns. Default 100. */
  maxTurns?: number;
}

const builtInInvalidActions = [
  '',
  'no tags at all',
  '<answer></answer>',
  '<answer>x</answer><answer>y</answer>',
  '<answer>x</answer> trailing text',
  '<think>unclosed <answer>x</answer>',
  '<tool_call>{not json</tool_call>',
];

interface Recorded {
  reset: unknown;
  steps: Array<{ action: string; result: StepResult }>;
}

/** The contract's options with their defaults filled in. */
interface ContractSettings {
  makeExpert: EnvContractOptions['makeExpert'];
  seeds: number[];
  firstSeed: number;
  invalidActions: string[];
  invalidReward: number;
  maxBytes: number;
  maxTurns: number;
}

export function envContract(name: string, makeEnv: () => Env, options: EnvContractOptions): void {
  const seeds = options.seeds ?? splitSeeds('test', 5);
  const settings: ContractSettings = {
    makeExpert: options.makeExpert,
    seeds,
    firstSeed: at(seeds, 0, 'env contract seeds'),
    invalidActions: [...builtInInvalidActions, ...(options.invalidActions ?? [])],
    invalidReward: options.invalidActionReward ?? 0,
    maxBytes: options.maxObservationBytes ?? 512,
    maxTurns: options.maxTurns ?? 100,
  };
  describe(`env contract: ${name}`, () => {
    test('reset gives a compact observation; instructions and tool schemas exist', () =>
      checkReset(name, makeEnv, settings));
    test('the same seed and actions replay the same episode', () => checkReplay(makeEnv, settings));
    test('a malformed action is an invalid-action observation, never an exception', () =>
      checkMalformed(makeEnv, settings));
    test('an over-long action (4 MB text or tool call) is an invalid turn, unread, answered at once', () =>
      checkOverLong(makeEnv, settings));
    test(`repeated invalid actions end the episode within ${settings.maxTurns} turns, then step rejects`, () =>
      checkRepeatedInvalid(makeEnv, settings));
    test('step before reset rejects with EpisodeNotStartedError', async () => {
      await assert.rejects(makeEnv().step({ text: '<answer>x</answer>' }), EpisodeNotStartedError);
    });
    test('the expert solves its tasks; stepping after done rejects with EpisodeEndedError', () =>
      checkExpert(makeEnv, settings));
  });
}

/** Plays one episode with `actions` (or with a noisy expert when none are given). */
async function play(env: Env, seed: number, settings: ContractSettings, actions?: string[]): Promise<Recorded> {
  const expert = settings.makeExpert({ seed, randomActionRate: 0.5 });
  let observation = await env.reset({ seed });
  const recorded: Recorded = { reset: observation, steps: [] };
  for (let turn = 0; turn < (actions?.length ?? settings.maxTurns); turn++) {
    const action = actions?.[turn] ?? expert.act(observation);
    const result = await env.step({ text: action });
    assertStepRewardComponents(env, result);
    recorded.steps.push({ action, result });
    observation = result.observation;
    if (result.done || result.truncated) break;
  }
  return recorded;
}

async function checkReset(name: string, makeEnv: () => Env, { seeds, maxBytes }: ContractSettings): Promise<void> {
  const env = makeEnv();
  assert.equal(env.name, name);
  assert.ok(typeof env.instructions === 'string' && env.instructions.length > 0, 'instructions are set');
  for (const tool of env.tools ?? [])
    assert.equal(typeof tool.inputSchema.safeParse, 'function', `${tool.name} has a zod schema`);
  for (const seed of seeds) {
    const observation = await env.reset({ seed });
    assert.ok(observation.text.length > 0);
    assert.ok(Buffer.byteLength(observation.text) <= maxBytes, `observation over ${maxBytes} bytes`);
  }
}

async function checkReplay(makeEnv: () => Env, settings: ContractSettings): Promise<void> {
  for (const seed of settings.seeds) {
    const env = makeEnv();
    const first = await play(env, seed, settings);
    const actions = first.steps.map((step) => step.action);
    assert.deepEqual(await play(makeEnv(), seed, settings, actions), first, 'fresh instance');
    assert.deepEqual(await play(env, seed, settings, actions), first, 'same instance after reset');
  }
}

async function checkMalformed(
  makeEnv: () => Env,
  { firstSeed, invalidActions, invalidReward, maxBytes }: ContractSettings,
): Promise<void> {
  const env = makeEnv();
  for (const text of invalidActions) {
    await env.reset({ seed: firstSeed });
    const result = await env.step({ text });
    assert.equal(result.info.invalidAction, true, `invalid: ${JSON.stringify(text)}`);
    assert.ok(Math.abs(result.reward - invalidReward) < 1e-12, `reward ${result.reward} for ${JSON.stringify(text)}`);
    assert.equal(result.done, false);
    assert.ok(Buffer.byteLength(result.observation.text) <= maxBytes);
  }
}

async function checkOverLong(
  makeEnv: () => Env,
  { firstSeed, invalidReward, maxBytes }: ContractSettings,
): Promise<void> {
  const env = makeEnv();
  const text = `<answer>${'7 '.repeat(2_000_000)}</answer>`;
  const toolCall = { id: 'call-1', name: env.tools?.[0]?.name ?? 'none', arguments: { query: 'x'.repeat(4_000_000) } };
  for (const action of [{ text }, { text: '', toolCall }]) {
    await env.reset({ seed: firstSeed });
    const started = performance.now();
    const result = await env.step(action);
    const milliseconds = performance.now() - started;
    assert.equal(result.info.invalidAction, true, 'invalid');
    assert.ok(Math.abs(result.reward - invalidReward) < 1e-12, `reward ${result.reward}`);
    assert.equal(result.done, false);
    assert.ok(Buffer.byteLength(result.observation.text) <= maxBytes);
    assert.ok(milliseconds < 1000, `answered in ${milliseconds.toFixed(0)} ms`);
  }
  await env.reset({ seed: firstSeed });
  assert.match(
    String((await env.step({ text })).info.reason ?? ''),
    /action of 4000017 characters is over the limit of \d+/,
  );
}

async function checkRepeatedInvalid(makeEnv: () => Env, { firstSeed, maxTurns }: ContractSettings): Promise<void> {
  const env = makeEnv();
  await env.reset({ seed: firstSeed });
  let ended = false;
  for (let turn = 0; turn < maxTurns && !ended; turn++) {
    const result = await env.step({ text: 'not an action' });
    ended = result.done || result.truncated;
  }
  assert.ok(ended, 'episode ended');
  await assert.rejects(env.step({ text: 'not an action' }), EpisodeEndedError);
}

async function checkExpert(makeEnv: () => Env, { seeds, maxTurns, makeExpert }: ContractSettings): Promise<void> {
  for (const seed of seeds) {
    const env = makeEnv();
    const expert = makeExpert({ seed });
    let observation = await env.reset({ seed });
    let last: StepResult | undefined;
    for (let turn = 0; turn < maxTurns && !(last?.done || last?.truncated); turn++) {
      last = await env.step({ text: expert.act(observation) });
      observation = last.observation;
    }
    assert.equal(last?.done, true, `seed ${seed}: episode done`);
    assert.equal(last?.info.success, true, `seed ${seed}: solved`);
    await assert.rejects(env.step({ text: expert.act(observation) }), EpisodeEndedError);
  }
}
