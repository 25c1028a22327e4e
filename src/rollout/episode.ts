/**
 * One episode in token space: its explicit state and the three moves of the rollout loop —
 * `startEpisode` (reset, render the first prompt), `recordTurn` (append the assistant tokens, step
 * the env, place the reward) and `finishEpisode` (the `Trajectory`). The context only ever grows by
 * appending rendered pieces, so the ids are the chat template's rendering of the conversation
 * (see rollout.ts for the format and the context-window policy).
 */
import { replyClosing, TokenTranscript } from '../agents/token-transcript.ts';
import { at } from '../core/indexing.ts';
import type { Action, Env, Observation, StepResult, Trajectory } from '../core/types.ts';
import type { Expert } from '../envs/expert.ts';
import type { ChatFormat } from '../chat/chat-format.ts';
import type { Tokenizer } from '../chat/tokenizer.ts';
import { toolSchema } from '../policy/openai-wire.ts';
import type { Generation } from '../policy/types.ts';

/** What the rollout fixed for every episode. */
export interface EpisodeSettings {
  tokenizer: Tokenizer;
  /** Renders prompts and turns: the policy's own chat format, or agentrl's byte template. */
  chatFormat: ChatFormat;
  contextWindow: number;
  /** Room kept free after a prompt: maxNewTokens + 1 (a cut generation is closed by `<|end|>`). */
  reserve: number;
  maxTurns: number;
  /**
   * Bounded history: the policy sees the system prompt, the last `historyTurns` turns and the
   * current observation; every turn becomes a segment. Undefined = the whole conversation.
   */
  historyTurns?: number;
  /** Put `env.instructions` in a system message. */
  instructions: boolean;
  /**
   * Speak the chat format's tool protocol (rollout.ts `structuredToolCalls`): env.tools in the
   * prompt, replies parsed into `env.step({ text, toolCall })`, a call's result as a tool message.
   */
  structuredToolCalls: boolean;
}

export interface EpisodeState {
  /** Position in the rollout's episode list (trajectories come back in this order). */
  index: number;
  seed: number;
  task: unknown;
  groupId: string;
  env: Env;
  /** Present in expert mode: the expert acts instead of the policy. */
  expert: Expert | undefined;
  /** The observation the next action answers. */
  observation: Observation;
  /** The conversation in token space (with bounded history, one segment per turn). */
  transcript: TokenTranscript;
  success: boolean;
  truncated: boolean;
  ended: boolean;
  /** The ids the policy continues from for the next turn. */
  prompt: readonly number[];
  /** Bounded history only: `<|bos|>` + system message ids. */
  header: number[];
  /** Bounded history only: per finished turn, its user(observation) + `<|assistant|>` ids and its reply ids. */
  history: { user: number[]; reply: number[] }[];
  /** Bounded history only: the current observation's user + `<|assistant|>` ids. */
  currentUser: number[];
  /** The first prompt's length when it did not fit the window (the episode ended before any turn). */
  unfitPromptTokens: number | undefined;
  /** The observation `reset` returned: its text is the episode's prompt, its `privileged` is for the trainer's rewards only. */
  firstObservation: Observation;
  /** The env's named reward components (`info.rewardComponents`) summed over the steps so far; undefined while none came. */
  rewardComponents: Record<string, number> | undefined;
  /** Components a step reported as a non-finite number (name → which turn and what). */
  rewardFailures: Record<string, string> | undefined;
}

/** Resets the env and renders `<|bos|>` system, user(first observation), `<|assistant|>`. */
export async function startEpisode(
  env: Env,
  episode: { index: number; seed: number; task: unknown; groupId: string; expert: Expert | undefined },
  settings: EpisodeSettings,
): Promise<EpisodeState> {
  const observation = await env.reset(
    episode.task === undefined ? { seed: episode.seed } : { seed: episode.seed, task: episode.task },
  );
  const messages = [
    ...(env.instructions === undefined || !settings.instructions
      ? []
      : [{ role: 'system' as const, content: env.instructions }]),
    { role: 'user' as const, content: observation.text },
  ];
  const tools = settings.structuredToolCalls ? (env.tools ?? []).map(toolSchema) : [];
  const prompt = settings.chatFormat.render(messages, { tools, addGenerationPrompt: true }).tokens;
  const currentUser = settings.chatFormat.userTurn(observation.text);
  const state: EpisodeState = {
    ...episode,
    env,
    observation,
    transcript: new TokenTranscript({ segments: settings.historyTurns !== undefined }),
    success: false,
    truncated: false,
    ended: false,
    prompt: [],
    header: prompt.slice(0, prompt.length - currentUser.length),
    history: [],
    currentUser,
    unfitPromptTokens: undefined,
    firstObservation: observation,
    rewardComponents: undefined,
    rewardFailures: undefined,
  };
  // Context-window policy: the first prompt must leave room for a full generation.
  if (prompt.length + settings.reserve > settings.contextWindow) {
    state.unfitPromptTokens = prompt.length;
    return end(state, { truncated: true });
  }
  state.transcript.appendContext(prompt);
  state.prompt = settings.historyTurns === undefined ? state.transcript.tokens : prompt;
  return state;
}

/** The assistant tokens of a turn: the generated ids (or the expert's text + `<|end|>`). */
export interface TurnReply {
  tokens: number[];
  logprobs: number[];
  text: string;
}

export function expertReply(expert: Expert, observation: Observation, chatFormat: ChatFormat): TurnReply {
  const text = expert.act(observation);
  const tokens = [...chatFormat.tokenizer.encode(text), at(chatFormat.turnEnd, 0, 'turnEnd')];
  return { tokens, logprobs: tokens.map(() => 0), text };
}

export function policyReply(generation: Generation): TurnReply {
  return { tokens: generation.tokens, logprobs: generation.logprobs, text: generation.text };
}

/**
 * Appends the reply (lossMask 1), closes a cut reply with `<|end|>` (lossMask 0), steps the env
 * with the reply text (and its tool call, `stepAction`), puts the reward on the reply's last
 * token, and either ends the episode or appends the next observation — a tool message when it
 * answers a tool call, else user(observation) — and the generation prompt for the next turn.
 */
export async function recordTurn(state: EpisodeState, reply: TurnReply, settings: EpisodeSettings): Promise<void> {
  const closing = replyClosing(settings.chatFormat, reply.tokens);
  if (
    reply.tokens.length === 0 ||
    state.prompt.length + reply.tokens.length + closing.length > settings.contextWindow
  ) {
    endState(state, { truncated: true });
    return;
  }
  if (settings.historyTurns !== undefined)
    state.history.push({ user: state.currentUser, reply: [...reply.tokens, ...closing] });
  state.transcript.appendReply(reply, { closing, prompt: state.prompt });

  const action = stepAction(reply.text, state.transcript.turns.length - 1, settings);
  const result: StepResult = await state.env.step(action);
  state.transcript.reward(result.reward);
  addRewardComponents(state, result.info.rewardComponents);
  state.transcript.observe(result.observation.text, { invalidAction: result.info.invalidAction === true });
  state.observation = result.observation;
  state.success = result.info.success === true;

  if (result.done) return endState(state, { truncated: false });
  if (result.truncated || state.transcript.turns.length >= settings.maxTurns)
    return endState(state, { truncated: true });
  // The observation that answers a structured tool call is that call's tool message; any other is a user turn.
  const next =
    action.toolCall === undefined
      ? settings.chatFormat.userTurn(result.observation.text)
      : settings.chatFormat.toolTurn(result.observation.text, action.toolCall);
  if (settings.historyTurns !== undefined) {
    // Bounded history: system + the last k turns + the new observation, from stored ids.
    state.currentUser = next;
    const kept = settings.historyTurns > 0 ? state.history.slice(-settings.historyTurns) : [];
    const prompt = [...state.header, ...kept.flatMap((turn) => [...turn.user, ...turn.reply]), ...next];
    if (prompt.length + settings.reserve > settings.contextWindow) return endState(state, { truncated: true });
    state.transcript.appendContext(next);
    state.prompt = prompt;
    return;
  }
  // Context-window policy: the next prompt must leave room for a full generation, else the
  // episode ends here (truncated, rewards so far kept, the unseen observation not appended).
  if (state.transcript.tokens.length + next.length + settings.reserve > settings.contextWindow)
    return endState(state, { truncated: true });
  state.transcript.appendContext(next);
}

/**
 * What `env.step` gets: the reply text, and with `structuredToolCalls` the reply's first tool
 * call in the model's own format (`chatFormat.parseAssistant`; an `Action` holds one call, so
 * further calls in the same reply are not run). Call ids are `call_<turn>_<index>`.
 */
function stepAction(text: string, turn: number, settings: EpisodeSettings): Action {
  if (!settings.structuredToolCalls) return { text };
  const toolCall = settings.chatFormat.parseAssistant(text, { idPrefix: `call_${turn}_` }).toolCalls[0];
  return toolCall === undefined ? { text } : { text, toolCall };
}

/** The names `reward()` accepts (src/rewards/reward.ts): metric-key safe. */
const componentNamePattern = /^[a-z][A-Za-z0-9_-]{0,63}$/;

/**
 * Sums a step's named reward components into the episode's. A component that is not a finite
 * number is a failure of that component (named, with its turn), never added as 0.
 */
function addRewardComponents(state: EpisodeState, components: Record<string, number> | undefined): void {
  if (components === undefined) return;
  const turn = state.transcript.turns.length - 1;
  for (const [name, value] of Object.entries(components)) {
    // A name is a metric key (reward/<name>): a remote env's `__proto__` or `a/b` is refused, by name.
    if (!componentNamePattern.test(name)) {
      state.rewardFailures ??= {};
      state.rewardFailures.rewardComponents ??= `the env reported a component named ${JSON.stringify(name.slice(0, 80))} at turn ${turn}: not a reward name (a-z, A-Z, 0-9, _ or -, starting with a lower-case letter)`;
      continue;
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      state.rewardFailures ??= {};
      state.rewardFailures[name] ??= `the env reported ${String(value)} at turn ${turn}, not a finite number`;
      continue;
    }
    state.rewardComponents ??= {};
    state.rewardComponents[name] = (state.rewardComponents[name] ?? 0) + value;
  }
}

/** The episode's trajectory; `rewardComponents` / `rewardFailures` only when the env reported components. */
export function finishEpisode(state: EpisodeState): Trajectory {
  const { success, truncated, groupId, seed, rewardComponents, rewardFailures } = state;
  return {
    ...state.transcript.trajectory({ success, truncated, groupId, seed }),
    ...(rewardComponents === undefined ? {} : { rewardComponents }),
    ...(rewardFailures === undefined ? {} : { rewardFailures }),
  };
}

/**
 * What the trainer's rewards see of an episode besides its trajectory (src/rewards/episode-context.ts):
 * the first observation's text, the task, and `privileged` (never shown to the agent). A
 * `privileged` that is not a plain object is kept under `value`.
 */
export interface EpisodeStart {
  prompt: string;
  task?: unknown;
  privileged?: Readonly<Record<string, unknown>>;
}

export function episodeStart(state: EpisodeState): EpisodeStart {
  const { text, privileged } = state.firstObservation;
  return {
    prompt: text,
    ...(state.task === undefined ? {} : { task: state.task }),
    ...(privileged === undefined ? {} : { privileged: asRecord(privileged) }),
  };
}

function asRecord(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { value };
}

function end(state: EpisodeState, { truncated }: { truncated: boolean }): EpisodeState {
  endState(state, { truncated });
  return state;
}

function endState(state: EpisodeState, { truncated }: { truncated: boolean }): void {
  state.ended = true;
  state.truncated = truncated;
}
