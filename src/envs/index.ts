/**
 * The environments agentrl ships, as descriptors (`agentrl envs` lists them), and their public API.
 *
 *   const env = makeEnv('sokoban', { maxSteps: 20 });
 *   const expert = getEnvironment('sokoban').expert({ seed: 1, randomActionRate: 0.1 });
 *   let observation = await env.reset({ seed: splitSeed('train', 0) });
 *   const result = await env.step({ text: expert.act(observation) });
 */
import type { z } from 'zod';
import { UnknownNameError, type Env } from '../core/index.ts';
import { banditOptionsSchema, makeBandit, type BanditOptions } from './bandit/env.ts';
import { banditExpert } from './bandit/expert.ts';
import { calculatorOptionsSchema, makeCalculator, type CalculatorOptions } from './calculator/env.ts';
import { calculatorExpert } from './calculator/expert.ts';
import type { Expert, ExpertOptions } from './expert.ts';
import { frozenLakeOptionsSchema, makeFrozenLake, type FrozenLakeOptions } from './frozen-lake/env.ts';
import { frozenLakeExpert } from './frozen-lake/expert.ts';
import { makeSokoban, sokobanOptionsSchema, type SokobanOptions } from './sokoban/env.ts';
import { sokobanExpert } from './sokoban/expert.ts';

export interface EnvDescriptor {
  name: string;
  description: string;
  /** The actions, one line. */
  actions: string;
  /** The reward, one line. */
  reward: string;
  /** The env's options (zod, with defaults); `make` validates against it. */
  optionsSchema: z.ZodObject;
  make(options?: object): Env;
  expert(options?: ExpertOptions): Expert;
}

export const environments: readonly EnvDescriptor[] = [
  {
    name: 'frozen-lake',
    description: 'RAGEN FrozenLake: walk P to the goal G on a random solvable 4x4 lake without falling into a hole O.',
    actions: '<answer>Left|Down|Right|Up</answer> (or 1-4; several joined by || when maxActionsPerTurn > 1)',
    reward: '1 on reaching the goal, else 0; -formatPenalty per invalid turn',
    optionsSchema: frozenLakeOptionsSchema,
    make: (options) => makeFrozenLake(options as FrozenLakeOptions),
    expert: frozenLakeExpert,
  },
  {
    name: 'sokoban',
    description: 'RAGEN Sokoban: push the box X onto the target O in a 6x6 room, solvable within maxSteps (10).',
    actions: '<answer>Up|Down|Left|Right</answer> (or 1-4; several joined by || when maxActionsPerTurn > 1)',
    reward: '-0.1 per move, +1 box onto a target, -1 box off one, +10 when solved; -formatPenalty per invalid turn',
    optionsSchema: sokobanOptionsSchema,
    make: (options) => makeSokoban(options as SokobanOptions),
    expert: sokobanExpert,
  },
  {
    name: 'calculator',
    description: 'Compute an integer arithmetic expression (+ - * and parentheses), with a calculator tool.',
    actions: '<tool_call>{"name": "calculator", "arguments": {"expression": "..."}}</tool_call> or <answer>integer</answer>',
    reward: '1 for the exact integer answer, else 0; -formatPenalty per invalid turn',
    optionsSchema: calculatorOptionsSchema,
    make: (options) => makeCalculator(options as CalculatorOptions),
    expert: calculatorExpert,
  },
  {
    name: 'bandit',
    description: 'Two-armed bandit smoke test: one turn, arm B pays 1 with p 0.8, arm A with p 0.2.',
    actions: '<answer>A|B</answer> (arm names are options)',
    reward: '1 when the chosen arm pays, else 0; success = chose the better arm',
    optionsSchema: banditOptionsSchema,
    make: (options) => makeBandit(options as BanditOptions),
    expert: banditExpert,
  },
];

export function environmentNames(): string[] {
  return environments.map((descriptor) => descriptor.name);
}

/** The descriptor of an environment; `UnknownNameError` lists the names when there is none. */
export function getEnvironment(name: string): EnvDescriptor {
  const descriptor = environments.find((candidate) => candidate.name === name);
  if (descriptor === undefined) throw new UnknownNameError('environment', name, environmentNames());
  return descriptor;
}

/** Makes an environment by name; options are validated by its schema (`InvalidArgumentError`). */
export function makeEnv(name: string, options: object = {}): Env {
  return getEnvironment(name).make(options);
}

export { formatAnswer, formatToolCall, parseAction, parseMoveAction, parseMoves } from './action-format.ts';
export type { ParsedAction, ParsedMoves, ParsedToolCall } from './action-format.ts';
export { TaskGenerationError } from './errors.ts';
export { expertOptionsSchema, makeExpert } from './expert.ts';
export type { Expert, ExpertOptions } from './expert.ts';
export { playEpisode } from './play.ts';
export type { EpisodeSummary } from './play.ts';
export { SPLIT_SIZE, splitOfSeed, splitSeed, splitSeeds, splits } from './split.ts';
export { BanditEnv, banditOptionsSchema, makeBandit } from './bandit/env.ts';
export type { BanditData, BanditOptions } from './bandit/env.ts';
export { banditExpert } from './bandit/expert.ts';
export { CalculatorEnv, calculatorOptionsSchema, calculatorTool, makeCalculator } from './calculator/env.ts';
export type { CalculatorData, CalculatorOptions, CalculatorTask } from './calculator/env.ts';
export { CalculatorError, evaluateExpression } from './calculator/evaluate.ts';
export { calculatorExpert } from './calculator/expert.ts';
export { FrozenLakeEnv, frozenLakeOptionsSchema, makeFrozenLake } from './frozen-lake/env.ts';
export type { FrozenLakeData, FrozenLakeOptions, FrozenLakeTask } from './frozen-lake/env.ts';
export { frozenLakeExpert } from './frozen-lake/expert.ts';
export { SokobanEnv, makeSokoban, sokobanOptionsSchema, sokobanRewards } from './sokoban/env.ts';
export type { SokobanData, SokobanOptions, SokobanTask } from './sokoban/env.ts';
export { sokobanExpert } from './sokoban/expert.ts';
export { solveSokoban } from './sokoban/solver.ts';
