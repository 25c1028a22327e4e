/**
 * Plain data types shared by every layer. See DESIGN.md "Contracts".
 */
import type { z } from 'zod';

/** A chat message in the OpenAI messages format. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  name: string;
  /** Parsed arguments (JSON object). */
  arguments: Record<string, unknown>;
  /**
   * The arguments as the caller wrote them (an OpenAI-style `arguments` JSON string), when they
   * came as text: the chat template renders this text verbatim, as transformers'
   * `apply_chat_template` does, instead of re-serialising `arguments`.
   */
  argumentsJson?: string;
}

export interface Message {
  role: Role;
  content: string;
  /** Tool calls the assistant made in this message. */
  toolCalls?: ToolCall[];
  /** For role `tool`: the id of the call this message answers. */
  toolCallId?: string;
  /** For role `tool`: the tool's name. */
  name?: string;
}

/** A tool: a structured action with a zod input schema. */
export interface Tool<Input = any, Output = unknown> {
  name: string;
  description: string;
  inputSchema: z.ZodType<Input>;
  execute(input: Input): Promise<Output> | Output;
}

/**
 * What the agent sees (`text`, `data`) and, apart, what only the env's side may see
 * (`privileged`). `text` is what goes into the model's context.
 */
export interface Observation {
  text: string;
  /** Optional structured payload the agent may see (grid, page, question, …) for renderers and scripted policies. */
  data?: unknown;
  /**
   * What the agent must not see: the reference answer, hidden tests, the other side's private
   * values ("privileged information", as in asymmetric actor-critic). For the env's scripted
   * expert and an in-process trainer only: the env server (`agentrl serve-env`) never sends it.
   */
  privileged?: unknown;
}

/** What the agent does: raw text from the policy (parsed by the env) and/or a structured tool call. */
export interface Action {
  text: string;
  toolCall?: ToolCall;
}

export interface StepResult {
  observation: Observation;
  reward: number;
  /** The episode reached a terminal state (success or failure). */
  done: boolean;
  /** The episode was cut (step limit) without reaching a terminal state. */
  truncated: boolean;
  info: StepInfo;
}

export interface StepInfo {
  /** The action could not be parsed or was not allowed. */
  invalidAction?: boolean;
  /** The task is solved (set on the final step). */
  success?: boolean;
  /** This step's reward by named component (raw values): `reward = Σ weights[name] · rewardComponents[name]` of the env's `rewardComponents` spec. */
  rewardComponents?: Record<string, number>;
  [key: string]: unknown;
}

/** What a reward component pays for (src/rewards/reward.ts): the outcome, the reply's format, a shaping or penalty term, or a judge. */
export type RewardKind = 'outcome' | 'format' | 'shaping' | 'penalty' | 'judge';

/** An env's reward as named components (a `Rubric` from src/rewards satisfies it): names, weights and kinds. */
export interface RewardComponentsSpec {
  readonly names: readonly string[];
  readonly weights: Readonly<Record<string, number>>;
  readonly kinds: Readonly<Record<string, RewardKind>>;
}

/** An environment is a POMDP. Plain object, state kept inside the instance, deterministic under a seed. */
export interface Env<Task = unknown> {
  name: string;
  tools?: Tool[];
  /** A system prompt explaining the task and the action format. */
  instructions?: string;
  reset(options: { seed: number; task?: Task }): Promise<Observation>;
  step(action: Action): Promise<StepResult>;
  /** Releases what the instance holds (e.g. a remote session); optional. The rollout calls it as each episode ends. */
  close?(): Promise<void>;
  /**
   * The tasks `reset` accepts from outside, sizes bounded (optional). The env server (`agentrl
   * serve-env`) checks a client's `task` against it, and refuses client tasks for an env without
   * one unless started with `allowClientTasks`.
   */
  taskSchema?: z.ZodType<Task>;
  /** The named components of this env's step reward (each step's `info.rewardComponents` holds their values). */
  rewardComponents?: RewardComponentsSpec;
}

/** Which seed ranges a task generator uses; they never overlap. */
export type Split = 'train' | 'validation' | 'test';

/** One turn of a multi-turn trajectory, in token space. */
export interface Turn {
  /** Token span [start, end) of this turn's policy-generated tokens inside the trajectory. */
  start: number;
  end: number;
  reward: number;
  /** The action text the policy produced. */
  action: string;
  /** The observation text that followed. */
  observation: string;
  invalidAction: boolean;
}

/**
 * One turn's training sample when the policy sees a bounded history (rollout `historyTurns`):
 * the exact prompt it was given (system + the last k turns + the current observation, assembled
 * from stored token ids) followed by its reply.
 */
export interface TrajectorySegment {
  /** Index of the turn in `Trajectory.turns`. */
  turn: number;
  tokens: number[];
  lossMask: number[];
  logprobs: number[];
}

/** A token-level trajectory: ids end to end, never re-tokenized. */
export interface Trajectory {
  /** All token ids: prompt, generated actions, observations. */
  tokens: number[];
  /** 1 = generated by the policy (trained on), 0 = prompt, observation, tool output. */
  lossMask: number[];
  /** Log-prob under the sampling policy of each token (0 where lossMask is 0). */
  logprobs: number[];
  /** Per-token reward: each turn's reward sits on that turn's last generated token. */
  tokenRewards: number[];
  turns: Turn[];
  /** Sum of turn rewards. */
  totalReward: number;
  success: boolean;
  /** Grouping key: trajectories of the same task share it (for GRPO, RLOO, DPO pairs). */
  groupId: string;
  /** The env's seed for this episode. */
  seed: number;
  /** The episode ended because the context window or step limit ran out. */
  truncated: boolean;
  /**
   * Present when the policy saw a bounded history: one sample per turn, each the exact context
   * the policy generated from. Train on these (the full-conversation fields above are a record).
   */
  segments?: TrajectorySegment[];
  /** Reward by named component, summed over the episode's steps (raw values; the env's or a rubric's names). */
  rewardComponents?: Record<string, number>;
  /** Components that could not be scored (name → reason): such a trajectory is not trained on and is counted, never scored 0. */
  rewardFailures?: Record<string, string>;
  /**
   * The policy version that sampled it: the number of weight updates (RL iterations) the sampler's
   * weights had taken when the episode's group started. Set by the asynchronous trainer
   * (train/rl-async.ts); staleness at an update = trainer version − policyVersion. Absent = on-policy.
   */
  policyVersion?: number;
  /**
   * The agent of a multi-agent env this trajectory is the transcript of (rollout/multi-agent-rollout.ts):
   * its own observations and its own replies, each agent with its own policy. Absent = single agent.
   */
  role?: string;
}
