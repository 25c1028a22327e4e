/**
 * The rollout engine: runs episodes of env × policy, G per task, and records token-level
 * trajectories.
 *
 *   const { trajectories, stats } = await rollout({ policy, env: () => makeFrozenLake(), seeds: splitSeeds('train', 8), groupSize: 4 });
 *
 * Conversation format (model/chat-template.ts), kept as ids end to end — never re-tokenized:
 *
 *   <|bos|><|system|>{env.instructions}<|end|><|user|>{o_0}<|end|><|assistant|>{a_0}<|end|><|user|>{o_1}<|end|><|assistant|>{a_1}<|end|>…
 *
 * The first prompt is rendered once; afterwards the context only grows by appending the generated
 * ids (lossMask 1, with their sampling log-probs; the stop token `<|end|>` is generated and trained
 * on) and the rendered next observation `<|user|>{o}<|end|><|assistant|>` (lossMask 0). A reply
 * cut by `maxNewTokens` or a stop string is closed by an `<|end|>` with lossMask 0, so the ids
 * always equal `renderChat` of the conversation. Each turn's reward sits on its last generated
 * token. The observation after the final step is not appended (the trajectory ends with the
 * last reply).
 *
 * Batched generation: all live episodes (at most `concurrency`) that need an action are stepped
 * together — their prompts go to the policy in ONE `generateBatch` call per turn, with one
 * sampling seed per turn drawn from `samplingSeed`. Finished episodes are replaced by new ones
 * between turns. The same options replay the same trajectories.
 *
 * Context-window policy (window = policy.contextWindow, or `contextWindow`): before each turn the
 * prompt must leave room for `maxNewTokens` + 1 tokens (+1: the `<|end|>` that closes a cut
 * reply). When the next prompt would not fit, the episode ends as truncated BEFORE that
 * observation is appended: the trajectory keeps its turns and rewards so far and always fits the
 * window (so it can be scored and trained on without cutting). When even the first prompt does
 * not fit, the episode is truncated with no turns and no tokens (trainers skip it: it has no
 * masked tokens), and the rollout says so: `onWarning` (default: a process warning) names how many
 * episodes, the prompt lengths, the window and what to change; when NO episode fits, nothing at
 * all could be generated and the rollout throws `PromptTooLongError` instead. An expert reply that
 * would not fit ends the episode the same way.
 *
 * Episodes also end on `done` (truncated false), on the env's `truncated`, or after `maxTurns`
 * turns (truncated true). `success` is the last step's `info.success === true`. An env with a
 * `close()` (a remote env's session) is closed as its episode ends.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { Env, Trajectory } from '../core/types.ts';
import type { Expert } from '../envs/expert.ts';
import { agentrlChatFormat, type ChatFormat } from '../chat/chat-format.ts';
import { stopTokensOf } from '../chat/policy-chat-format.ts';
import { byteTokenizer, type Tokenizer } from '../chat/tokenizer.ts';
import type { Policy } from '../policy/types.ts';
import {
  episodeStart,
  expertReply,
  finishEpisode,
  policyReply,
  recordTurn,
  startEpisode,
  type EpisodeSettings,
  type EpisodeStart,
  type EpisodeState,
} from './episode.ts';
import { PromptTooLongError, promptFitAdvice, type PromptFit } from './errors.ts';
import { rolloutStats, type RolloutStats } from './stats.ts';

export interface RolloutOptions<Task = unknown> {
  /** Generates the actions; required unless `expert` is given (then only its tokenizer and window are read). */
  policy?: Policy;
  /** Makes a fresh env for each episode. */
  env: () => Env<Task>;
  /** One task per seed (env.reset({ seed })). */
  seeds: readonly number[];
  /** Optional tasks, one per seed (env.reset({ seed, task })). */
  tasks?: readonly Task[];
  /** Episodes per task (G); they share a groupId. Default 1. */
  groupSize?: number;
  /** Turns per episode at most. Default 10. */
  maxTurns?: number;
  /** Tokens per reply at most (the stop token included). Default 64. */
  maxNewTokens?: number;
  /** Sampling temperature; 0 = greedy. Default 1. */
  temperature?: number;
  /** Nucleus sampling mass. Default 1 (off). */
  topP?: number;
  /** Extra stop strings (e.g. '</answer>'); the reply is then closed by an unmasked `<|end|>`. Default none. */
  stopStrings?: readonly string[];
  /** Live episodes at most (also the largest generation batch). Default 64. */
  concurrency?: number;
  /** Seeds the per-turn sampling seeds. Default 0. */
  samplingSeed?: number;
  /**
   * Expert mode (SFT demonstrations): the expert's action text replaces the policy; the assistant
   * tokens are the encoded text + `<|end|>` (lossMask 1, logprob 0).
   */
  expert?: (episode: { seed: number; index: number }) => Expert;
  /**
   * Bounded history: the policy sees the system prompt, the last `historyTurns` turns and the
   * current observation, and each turn is recorded as its own segment (Trajectory.segments) —
   * the exact context it generated from. Keeps prompts short on long episodes (attention cost
   * grows with the square of the context). Default: the whole conversation.
   */
  historyTurns?: number;
  /**
   * Put `env.instructions` in a system message. Default true. A small model trained from scratch
   * learns the format from demonstrations, and the instructions then only cost context.
   */
  instructions?: boolean;
  /** Default: the policy's tokenizer (the byte tokenizer without a policy). */
  tokenizer?: Tokenizer;
  /** Default: the policy's chat format (`policy.chatFormat`), else agentrl's byte template over `tokenizer`. */
  chatFormat?: ChatFormat;
  /**
   * Speak the chat format's tool protocol: `env.tools` (as OpenAI function tools) rendered into
   * the first prompt by `chatFormat.render(messages, { tools })`; each reply parsed by
   * `chatFormat.parseAssistant` and its first tool call passed as `env.step({ text, toolCall })`;
   * the observation that answers that call rendered as a `tool` message (`chatFormat.toolTurn`),
   * every other observation as a user turn. Off: the env gets `{ text }` and parses it itself,
   * every observation is a user turn, no tools are rendered. Default: on with a model's own chat
   * format (`chatFormat` or `policy.chatFormat`, other than agentrl's), off with agentrl's byte
   * template — the byte models were trained on the envs' text format, which stays as it was.
   */
  structuredToolCalls?: boolean;
  /** Default: the policy's context window (Infinity without a policy). */
  contextWindow?: number;
  /** Called as each episode ends, in the order they end. */
  onEpisode?: (trajectory: Trajectory, progress: { completed: number; total: number }) => void;
  /**
   * Told when some episodes could not start because their first prompt does not fit the context
   * window (when none can, the rollout throws `PromptTooLongError`). Default: `process.emitWarning`
   * with code AGENTRL_PROMPT_TOO_LONG.
   */
  onWarning?: (message: string) => void;
  /** Milliseconds clock for tokensPerSecond. Default performance.now. */
  now?: () => number;
}

export interface RolloutResult {
  /** In episode order: task 0's G episodes, then task 1's, … */
  trajectories: Trajectory[];
  /**
   * Per trajectory (same order): the first observation's text, the task and the env's
   * `privileged` at reset — what the trainer's rewards see (src/rewards/episode-context.ts); the
   * agent never saw `privileged`, and nothing here is stored or exported.
   */
  episodes: EpisodeStart[];
  stats: RolloutStats;
}

export async function rollout<Task = unknown>(options: RolloutOptions<Task>): Promise<RolloutResult> {
  const plan = planRollout(options);
  const now = options.now ?? (() => performance.now());
  const started = now();
  const { trajectories, episodes, unfitPrompts } = await runEpisodes(options, plan);
  reportUnfitPrompts(unfitPrompts, plan, options.onWarning);
  return { trajectories, episodes, stats: rolloutStats(trajectories, (now() - started) / 1000) };
}

/** What every episode and turn of one rollout shares, checked. */
interface RolloutPlan {
  settings: EpisodeSettings;
  groupSize: number;
  maxNewTokens: number;
  concurrency: number;
  /** Episodes in all: seeds × groupSize. */
  total: number;
  /** One generation request of a turn, less its prompt and seed. */
  sampling: {
    maxNewTokens: number;
    temperature: number;
    topP: number;
    stopTokens: number[];
    stopStrings: readonly string[];
  };
}

function planRollout<Task>(options: RolloutOptions<Task>): RolloutPlan {
  const { policy, tasks, seeds, groupSize = 1, maxTurns = 10, maxNewTokens = 64, concurrency = 64 } = options;
  if (policy === undefined && options.expert === undefined)
    throw new InvalidArgumentError('rollout needs a policy, or an expert (expert mode)');
  if (tasks !== undefined && tasks.length !== seeds.length) {
    throw new InvalidArgumentError(`tasks (${tasks.length}) and seeds (${seeds.length}) must have the same length`);
  }
  for (const [name, value] of [
    ['groupSize', groupSize],
    ['maxTurns', maxTurns],
    ['maxNewTokens', maxNewTokens],
    ['concurrency', concurrency],
  ] as const) {
    if (!Number.isInteger(value) || value < 1)
      throw new InvalidArgumentError(`${name} must be a positive integer, got ${value}`, { [name]: value });
  }
  const ownFormat = options.chatFormat ?? policy?.chatFormat;
  const chatFormat = ownFormat ?? agentrlChatFormat(options.tokenizer ?? policy?.tokenizer ?? byteTokenizer);
  const settings: EpisodeSettings = {
    tokenizer: chatFormat.tokenizer,
    chatFormat,
    contextWindow: options.contextWindow ?? policy?.contextWindow ?? Infinity,
    reserve: maxNewTokens + 1,
    maxTurns,
    historyTurns: options.historyTurns,
    instructions: options.instructions ?? true,
    structuredToolCalls: options.structuredToolCalls ?? (ownFormat !== undefined && ownFormat.name !== 'agentrl'),
  };
  if (options.historyTurns !== undefined && !(Number.isInteger(options.historyTurns) && options.historyTurns >= 0)) {
    throw new InvalidArgumentError(`historyTurns must be a non-negative integer, got ${options.historyTurns}`);
  }
  // The turn's own stop token first (a scripted policy appends stopTokens[0]).
  const stopTokens = stopTokensOf(chatFormat);
  const sampling = {
    maxNewTokens,
    temperature: options.temperature ?? 1,
    topP: options.topP ?? 1,
    stopTokens,
    stopStrings: options.stopStrings ?? [],
  };
  return { settings, groupSize, maxNewTokens, concurrency, total: seeds.length * groupSize, sampling };
}

/**
 * Keeps up to `concurrency` episodes live: refills the pool in episode order, plays one batched
 * turn for all of them, finishes those that ended (closing their envs) — until every episode ran.
 */
async function runEpisodes<Task>(
  options: RolloutOptions<Task>,
  plan: RolloutPlan,
): Promise<{ trajectories: Trajectory[]; episodes: EpisodeStart[]; unfitPrompts: number[] }> {
  const trajectories = new Array<Trajectory>(plan.total);
  const episodes = new Array<EpisodeStart>(plan.total);
  const unfitPrompts: number[] = [];
  const samplingRng = new Rng(options.samplingSeed ?? 0);
  const closing: Promise<void>[] = [];
  let nextIndex = 0;
  let completed = 0;
  let live: EpisodeState[] = [];
  const finish = (state: EpisodeState): void => {
    if (state.unfitPromptTokens !== undefined) unfitPrompts.push(state.unfitPromptTokens);
    if (state.env.close !== undefined) closing.push(state.env.close());
    const trajectory = finishEpisode(state);
    trajectories[state.index] = trajectory;
    episodes[state.index] = episodeStart(state);
    completed++;
    options.onEpisode?.(trajectory, { completed, total: plan.total });
  };

  while (completed < plan.total) {
    const starting: Promise<EpisodeState>[] = [];
    while (live.length + starting.length < plan.concurrency && nextIndex < plan.total)
      starting.push(startEpisodeAt(nextIndex++, options, plan));
    for (const state of await Promise.all(starting)) {
      if (state.ended) finish(state);
      else live.push(state);
    }
    if (live.length === 0) continue;
    await playTurn(live, options.policy, plan, samplingRng.nextUint32());
    for (const state of live) if (state.ended) finish(state);
    live = live.filter((state) => !state.ended);
    await Promise.all(closing.splice(0));
  }
  await Promise.all(closing.splice(0));
  return { trajectories, episodes, unfitPrompts };
}

/** Episode `index`: task index / groupSize, a fresh env, its group id and (expert mode) its expert. */
function startEpisodeAt<Task>(index: number, options: RolloutOptions<Task>, plan: RolloutPlan): Promise<EpisodeState> {
  const taskIndex = Math.floor(index / plan.groupSize);
  const seed = at(options.seeds, taskIndex, 'seeds');
  const env = options.env();
  const groupId = options.tasks === undefined ? `${env.name}:${seed}` : `${env.name}:${seed}:task${taskIndex}`;
  const episode = { index, seed, task: options.tasks?.[taskIndex], groupId, expert: options.expert?.({ seed, index }) };
  return startEpisode(env as Env, episode, plan.settings);
}

/** One turn of every live episode: ONE batched generation for those the policy plays (one seed for the turn), the expert's reply for the others. */
async function playTurn(
  live: readonly EpisodeState[],
  policy: Policy | undefined,
  plan: RolloutPlan,
  turnSeed: number,
): Promise<void> {
  const played = live.filter((state) => state.expert === undefined);
  const requests = played.map((state) => ({ prompt: state.prompt, ...plan.sampling, seed: turnSeed }));
  const generations = played.length === 0 ? [] : await requirePolicy(policy).generateBatch(requests);
  const replies = new Map(played.map((state, i) => [state, policyReply(at(generations, i, 'generations'))]));
  const { chatFormat } = plan.settings;
  await Promise.all(
    live.map((state) =>
      recordTurn(
        state,
        replies.get(state) ?? expertReply(requireExpert(state), state.observation, chatFormat),
        plan.settings,
      ),
    ),
  );
}

function requirePolicy(policy: Policy | undefined): Policy {
  if (policy === undefined) throw new InvalidArgumentError('rollout needs a policy, or an expert (expert mode)');
  return policy;
}

function requireExpert(state: EpisodeState): Expert {
  if (state.expert === undefined)
    throw new InvalidArgumentError(`episode ${state.index} has neither a generation nor an expert`);
  return state.expert;
}

/** Episodes whose first prompt did not fit: `PromptTooLongError` when none could start, else a warning naming them. */
function reportUnfitPrompts(
  unfitPrompts: readonly number[],
  plan: RolloutPlan,
  onWarning: ((message: string) => void) | undefined,
): void {
  if (unfitPrompts.length === 0) return;
  const { total } = plan;
  const fit: PromptFit = {
    episodes: unfitPrompts.length,
    total,
    shortestPrompt: unfitPrompts.reduce((a, b) => Math.min(a, b)),
    longestPrompt: unfitPrompts.reduce((a, b) => Math.max(a, b)),
    contextWindow: plan.settings.contextWindow,
    maxNewTokens: plan.maxNewTokens,
  };
  if (fit.episodes === total) throw new PromptTooLongError(fit);
  const warn = onWarning ?? ((message: string) => process.emitWarning(message, { code: 'AGENTRL_PROMPT_TOO_LONG' }));
  warn(`${fit.episodes} of ${total} episodes did not start (truncated, no tokens): ${promptFitAdvice(fit)}`);
}
