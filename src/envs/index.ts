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
import { browserShopOptionsSchema, makeBrowserShop, type BrowserShopOptions } from './browser-shop/env.ts';
import { browserShopExpert } from './browser-shop/expert.ts';
import { absoluteZeroOptionsSchema, makeAbsoluteZero, type AbsoluteZeroOptions } from './absolute-zero/env.ts';
import { absoluteZeroExpert } from './absolute-zero/expert.ts';
import { codeOptionsSchema, makeCode, type CodeOptions } from './code/env.ts';
import { codeExpert } from './code/expert.ts';
import { countdownOptionsSchema, makeCountdown, type CountdownEnvOptions } from './countdown/env.ts';
import { countdownExpert } from './countdown/expert.ts';
import { mathOptionsSchema, makeMath, type MathOptions } from './math/env.ts';
import { mathExpert } from './math/expert.ts';
import { mcpFilesExpert } from './mcp/expert.ts';
import { makeMcpFiles, mcpFilesOptionsSchema, type McpFilesOptions } from './mcp/files-env.ts';
import { makeNegotiation, negotiationOptionsSchema, type NegotiationOptions } from './negotiation/env.ts';
import { negotiationExpert } from './negotiation/expert.ts';
import { makeSearch, searchOptionsSchema, type SearchOptions } from './search/env.ts';
import { searchExpert } from './search/expert.ts';
import { makeSwe, sweOptionsSchema, type SweOptions } from './swe/env.ts';
import { sweExpert } from './swe/expert.ts';
import { makeWebShop, webShopOptionsSchema, type WebShopOptions } from './webshop/env.ts';
import { webShopExpert } from './webshop/expert.ts';
import { makeMemoryRecall, memoryRecallOptionsSchema, type MemoryRecallOptions } from './memory-recall/env.ts';
import { memoryRecallExpert } from './memory-recall/expert.ts';

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
    actions:
      '<tool_call>{"name": "calculator", "arguments": {"expression": "..."}}</tool_call> or <answer>integer</answer>',
    reward:
      "1 for the exact integer answer, else 0; -formatPenalty per invalid turn; shaping, success unchanged (default 0 each): callFormatReward for the first well-formed calculator call, callOperandsReward for the first with the question's operands and operators, toolCallReward for the first that evaluates to the answer; easy → hard operands: CalculatorCurriculum (agentrl/envs)",
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
  {
    name: 'math',
    description:
      'Generated math: multi-step arithmetic, linear equations, word problems; an exact calculator tool; form-tolerant answer checking.',
    actions:
      '<tool_call>{"name": "calculator", "arguments": {"expression": "..."}}</tool_call> or <answer>7/2</answer> (any form: 3.5, 1,250, 12 km)',
    reward: '1 when correct (+ formatReward with a <think> block, default 0); -formatPenalty per invalid turn',
    optionsSchema: mathOptionsSchema,
    make: (options) => makeMath(options as MathOptions),
    expert: mathExpert,
  },
  {
    name: 'countdown',
    description:
      'TinyZero Countdown: reach the target from the given numbers with + - * / ( ), each number at most once.',
    actions: '<answer>(25 - 5) * 3</answer>',
    reward: '1 for a correct equation, partialReward (0.1) for a readable wrong one, else 0',
    optionsSchema: countdownOptionsSchema,
    make: (options) => makeCountdown(options as CountdownEnvOptions),
    expert: countdownExpert,
  },
  {
    name: 'code',
    description:
      'Write a JavaScript function from a spec (57 shipped tasks); unit tests run in a sandboxed node process.',
    actions: '<answer>function name(args) { ... }</answer>',
    reward: 'fraction of unit tests passed; success = all passed',
    optionsSchema: codeOptionsSchema,
    make: (options) => makeCode(options as CodeOptions),
    expert: codeExpert,
  },
  {
    name: 'search',
    description:
      'Search-R1: answer single- and multi-hop questions about a generated encyclopedia of fictional entities with BM25 search (budget K).',
    actions: '<search> query </search> (results in <information>) or <answer> text </answer>',
    reward:
      'exact match after SQuAD normalisation; optional R_answer + l1*R_citation - l2*C_search - l3*R_hallucination',
    optionsSchema: searchOptionsSchema,
    make: (options) => makeSearch(options as SearchOptions),
    expert: searchExpert,
  },
  {
    name: 'swe',
    description:
      'SWE-bench-style fixes: 12 small repositories with an issue, fail-to-pass and pass-to-pass tests run in the sandbox.',
    actions:
      '<tool_call> list_files | read_file | search | edit_file | run_tests </tool_call>, then <answer>submit</answer>',
    reward: '1 when every fail-to-pass test passes and every pass-to-pass test still passes, else 0',
    optionsSchema: sweOptionsSchema,
    make: (options) => makeSwe(options as SweOptions),
    expert: sweExpert,
  },
  {
    name: 'webshop',
    description:
      'WebShop-like store: search, result pages, product pages with options, buy; text view (the same pages are served as HTML).',
    actions: '<answer>search[query]</answer> or <answer>click[label]</answer>',
    reward: 'WebShop reward: category gate x (attributes + options + price matched) / their count; success = 1',
    optionsSchema: webShopOptionsSchema,
    make: (options) => makeWebShop(options as WebShopOptions),
    expert: webShopExpert,
  },
  {
    name: 'negotiation',
    description:
      'Two agents (Alice, Bob) split items in turn with private values; one shared policy can play both (MAGRPO-style).',
    actions: '<answer>take b h k</answer> or <answer>accept</answer>',
    reward: 'per agent: own value of the deal / 10 (info.agentRewards); step reward = their mean; no deal 0',
    optionsSchema: negotiationOptionsSchema,
    make: (options) => makeNegotiation(options as NegotiationOptions),
    expert: negotiationExpert,
  },
  {
    name: 'mcp-files',
    description:
      'Tools from a real MCP server (@modelcontextprotocol/server-filesystem over stdio) on generated notes; find a code word.',
    actions:
      '<tool_call>{"name": "read_text_file", "arguments": {"path": "notes/x.txt"}}</tool_call> (any server tool) or <answer>word</answer>',
    reward: '1 for the right word (SQuAD-normalised exact match), else 0',
    optionsSchema: mcpFilesOptionsSchema,
    make: (options) => makeMcpFiles(options as McpFilesOptions),
    expert: mcpFilesExpert,
  },
  {
    name: 'absolute-zero',
    description:
      'Absolute Zero self-play: propose a program and input (verified in the sandbox), then predict its output.',
    actions: '<answer>{"program": "function f(x) {...}", "input": ...}</answer>, then <answer>output as JSON</answer>',
    reward: 'propose: 1 - solve rate when learnable (needs a solver, see policySolver); solve: 1 when right',
    optionsSchema: absoluteZeroOptionsSchema,
    make: (options) => makeAbsoluteZero(options as AbsoluteZeroOptions),
    expert: absoluteZeroExpert,
  },
  {
    name: 'browser-shop',
    description:
      'The web shop driven through real headless Chromium (/usr/bin/chromium, playwright-core); accessibility-tree observations.',
    actions:
      '<answer>type[query]</answer> (search box) or <answer>click[name]</answer> (link or button by accessible name)',
    reward: 'the web shop reward of what was bought; success = 1',
    optionsSchema: browserShopOptionsSchema,
    make: (options) => makeBrowserShop(options as BrowserShopOptions),
    expert: browserShopExpert,
  },
  {
    name: 'memory-recall',
    description:
      'Facts early, distractors, then a question about one fact: with a bounded history the policy must use memory_insert / memory_search.',
    actions:
      '<answer>ok</answer>, <answer>code</answer> for the question, or <tool_call>{"name": "memory_insert"|"memory_search", "arguments": {...}}</tool_call>',
    reward: '1 for the asked code, else 0; -formatPenalty per invalid turn',
    optionsSchema: memoryRecallOptionsSchema,
    make: (options) => makeMemoryRecall(options as MemoryRecallOptions),
    expert: memoryRecallExpert,
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
export { PrivilegedCopyMismatchError, TaskGenerationError } from './errors.ts';
export { withPrivileged } from './with-privileged.ts';
export { expertOptionsSchema, makeExpert } from './expert.ts';
export type { RoleSpec } from './role-spec.ts';
export { negotiationRoles } from './negotiation/roles.ts';
export { absoluteZeroRoles } from './absolute-zero/roles.ts';
export type { Expert, ExpertOptions } from './expert.ts';
export { playEpisode } from './play.ts';
export type { EpisodeSummary } from './play.ts';
export { SPLIT_SIZE, splitOfSeed, splitSeed, splitSeeds, splits } from './split.ts';
export { BanditEnv, banditOptionsSchema, makeBandit } from './bandit/env.ts';
export type { BanditData, BanditOptions, BanditPrivileged } from './bandit/env.ts';
export { banditExpert } from './bandit/expert.ts';
export { CalculatorEnv, calculatorOptionsSchema, calculatorTool, makeCalculator } from './calculator/env.ts';
export type { CalculatorData, CalculatorOptions, CalculatorTask } from './calculator/env.ts';
export { CalculatorError, evaluateExpression } from './calculator/evaluate.ts';
export { calculatorExpert } from './calculator/expert.ts';
export {
  CalculatorCurriculum,
  calculatorCurriculumSchema,
  curriculumStageSchema,
  defaultOperandStages,
} from './calculator/calculator-curriculum.ts';
export type {
  CalculatorCurriculumOptions,
  CalculatorCurriculumState,
  CurriculumStage,
} from './calculator/calculator-curriculum.ts';
export { FrozenLakeEnv, frozenLakeOptionsSchema, makeFrozenLake } from './frozen-lake/env.ts';
export type { FrozenLakeData, FrozenLakeOptions, FrozenLakeTask } from './frozen-lake/env.ts';
export { frozenLakeExpert } from './frozen-lake/expert.ts';
export { SokobanEnv, makeSokoban, sokobanOptionsSchema, sokobanRewards } from './sokoban/env.ts';
export type { SokobanData, SokobanOptions, SokobanTask } from './sokoban/env.ts';
export { sokobanExpert } from './sokoban/expert.ts';
export { solveSokoban } from './sokoban/solver.ts';
export { ToolTaskEnv, toolTaskOptionsShape } from './tool-task.ts';
export type { ToolTaskEpisode, Verdict } from './tool-task.ts';
export { runInSandbox } from './sandbox/sandbox.ts';
export type { SandboxOptions, SandboxResult } from './sandbox/sandbox.ts';
export { runFunction } from './sandbox/function-runner.ts';
export type { FunctionRunOptions, FunctionRunResult } from './sandbox/function-runner.ts';
export { MathEnv, makeMath, mathOptionsSchema } from './math/env.ts';
export { answerMatches, readAnswer } from './math/answer-check.ts';
export { mathExpert } from './math/expert.ts';
export { CountdownEnv, countdownOptionsSchema, makeCountdown } from './countdown/env.ts';
export { checkEquation, generateCountdown, solveCountdown } from './countdown/countdown.ts';
export { countdownExpert } from './countdown/expert.ts';
export { CodeEnv, codeOptionsSchema, makeCode, scoreSolution } from './code/env.ts';
export { codeTasks } from './code/tasks.ts';
export { codeExpert } from './code/expert.ts';
export { SearchEnv, makeSearch, searchOptionsSchema } from './search/env.ts';
export { exactMatch, normalizeAnswer, searchReward } from './search/reward.ts';
export { searchExpert } from './search/expert.ts';
export { SweEnv, makeSwe, sweOptionsSchema } from './swe/env.ts';
export { sweInstances } from './swe/instances.ts';
export { runRepoTests } from './swe/run-tests.ts';
export { sweExpert } from './swe/expert.ts';
export { WebShopEnv, makeWebShop, webShopOptionsSchema } from './webshop/env.ts';
export { startShopServer } from './webshop/server.ts';
export { webShopExpert } from './webshop/expert.ts';
export { NegotiationEnv, makeNegotiation, negotiationOptionsSchema } from './negotiation/env.ts';
export { negotiationExpert } from './negotiation/expert.ts';
export { connectMcp, McpConnectionError } from './mcp/client.ts';
export type { McpConnection, McpServerSpec } from './mcp/client.ts';
export { McpFilesEnv, makeMcpFiles, mcpFilesOptionsSchema, openFilesWorkspace } from './mcp/files-env.ts';
export { mcpFilesExpert } from './mcp/expert.ts';
export { AbsoluteZeroEnv, absoluteZeroOptionsSchema, makeAbsoluteZero } from './absolute-zero/env.ts';
export type { Solver } from './absolute-zero/env.ts';
export { absoluteZeroExpert } from './absolute-zero/expert.ts';
export { BrowserShopEnv, browserShopOptionsSchema, makeBrowserShop } from './browser-shop/env.ts';
export { chromiumArgs, chromiumPath, openBrowserShop } from './browser-shop/browser.ts';
export { browserShopExpert } from './browser-shop/expert.ts';
export { MemoryRecallEnv, makeMemoryRecall, memoryRecallOptionsSchema, searchPassages } from './memory-recall/env.ts';
export type { MemoryRecallData, MemoryRecallOptions, MemoryRecallTask } from './memory-recall/env.ts';
export { memoryRecallExpert } from './memory-recall/expert.ts';
