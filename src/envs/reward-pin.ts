/**
 * Test support for the reward pin tests (`*-rewards.test.ts` beside each env): plays one seeded
 * episode from a script — fixed action texts and expert moves — and returns every step's reward
 * and how the episode ended, so a test can pin the exact values an env pays.
 *
 *   await playScript(makeSokoban(), { seed: 3, moves: ['<answer>Up</answer>'], thenExpert: sokobanExpert() })
 *   // → { rewards: [-0.1, -0.1, 10.9], end: 'done' }
 *
 * A reward of −0 is reported as 0 (the same reward; a weighted sum starting from 0 never gives −0).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Env } from '../core/index.ts';
import type { Expert } from './expert.ts';

/** A fixed action text, or the expert's move on the current observation. */
export type ScriptMove = string | Expert;

export interface Script<Task = unknown> {
  seed: number;
  task?: Task;
  moves: readonly ScriptMove[];
  /** After `moves`, this expert plays until the episode ends (at most `maxTurns` steps in all). */
  thenExpert?: Expert;
  maxTurns?: number;
}

export interface ScriptResult {
  rewards: number[];
  /** How the episode ended: `done`, `truncated`, or `open` when the script ran out first. */
  end: 'done' | 'truncated' | 'open';
}

export async function playScript<Task>(env: Env<Task>, script: Script<Task>): Promise<ScriptResult> {
  let observation = await env.reset(
    script.task === undefined ? { seed: script.seed } : { seed: script.seed, task: script.task },
  );
  const rewards: number[] = [];
  const limit = script.maxTurns ?? 60;
  for (let turn = 0; turn < limit; turn++) {
    const move = script.moves[turn] ?? script.thenExpert;
    if (move === undefined) return { rewards, end: 'open' };
    const result = await env.step({ text: typeof move === 'string' ? move : move.act(observation) });
    rewards.push(result.reward + 0);
    observation = result.observation;
    if (result.done) return { rewards, end: 'done' };
    if (result.truncated) return { rewards, end: 'truncated' };
  }
  return { rewards, end: 'open' };
}

/** One pinned case: what it plays (one or several scripts) and the exact results it must give. */
export interface PinCase {
  name: string;
  play: () => Promise<ScriptResult | ScriptResult[]>;
  expected: ScriptResult | ScriptResult[];
}

/** One test per case: the results equal the pinned ones exactly (every step's reward, the end). */
export function pinRewards(envName: string, cases: readonly PinCase[]): void {
  for (const pin of cases) {
    test(`${envName} rewards, pinned: ${pin.name}`, async () => {
      const actual = await pin.play();
      assert.deepEqual(actual, pin.expected);
    });
  }
}

/** Plays the same script (with the same expert factory) from each seed. */
export async function playSeeds<Task>(
  env: Env<Task>,
  seeds: readonly number[],
  script: (seed: number) => Script<Task>,
): Promise<ScriptResult[]> {
  const results: ScriptResult[] = [];
  for (const seed of seeds) results.push(await playScript(env, script(seed)));
  return results;
}
