/**
 * A conversation kept in token space for the agent scaffolds, so that what they run is a
 * `Trajectory` the RL trainer uses unchanged (ids end to end, never re-tokenized), in the
 * policy's own chat format (`chatFormatOf(policy)`; agentrl's byte template by default):
 *
 *   <|bos|> system user  <|assistant|> reply₁ <|end|>  observation₁  <|assistant|> reply₂ <|end|> …
 *   <|im_start|>system …<|im_end|>\n … <|im_start|>assistant\n reply₁ <|im_end|> \n <|im_start|>tool\n …   (ChatML)
 *
 * - `reply` ids are the policy's own generation (lossMask 1, its sampling log-probs), stopped at
 *   the format's stop tokens; the rest of the template's turn end follows (lossMask 0: ChatML's
 *   `\n`), all of it for a reply cut by `maxNewTokens` or a stop string;
 * - everything else (prompt, reply openings, observations, tool results) has lossMask 0: each is
 *   the format's rendering of the longer conversation past that of the shorter one, so the ids
 *   are `format.render(messages, { tools })` wherever the policy's ids re-tokenize the same;
 * - `reward(r)` puts a reward on the last generated token of the latest turn.
 *
 * `generate` refuses (returns undefined) when the next prompt would not leave room for a full
 * reply in the policy's context window: the scaffold ends the episode as truncated.
 *
 * The ids are recorded by a `TokenTranscript` (token-transcript.ts), as the rollout's episodes are.
 */
import type { Message, Trajectory } from '../core/types.ts';
import type { ChatFormat } from '../chat/chat-format.ts';
import { appendedTokens, chatFormatOf, stopTokensOf } from '../chat/policy-chat-format.ts';
import { at } from '../core/indexing.ts';
import type { PromptTool } from '../chat/tools-prompt.ts';
import type { Generation, Policy, SamplingOptions } from '../policy/types.ts';
import { replyClosing, TokenTranscript } from './token-transcript.ts';

export type AgentSampling = Omit<SamplingOptions, 'stopTokens'>;

export class Transcript {
  readonly messages: Message[];
  /** The chat format the conversation is rendered in (the policy's). */
  readonly format: ChatFormat;
  /** The conversation in token space. */
  readonly record = new TokenTranscript();
  private readonly policy: Policy;
  private readonly tools: readonly PromptTool[];
  private readonly stopTokens: number[];

  /** `tools`: rendered by the format itself (a model's template lists them its own way). Default none. */
  constructor(policy: Policy, messages: readonly Message[], { tools = [] }: { tools?: readonly PromptTool[] } = {}) {
    this.policy = policy;
    this.format = chatFormatOf(policy);
    this.tools = tools;
    this.stopTokens = stopTokensOf(this.format);
    this.messages = [...messages];
    this.record.appendContext(this.format.render(messages, { tools }).tokens);
  }

  /** Generates the next assistant reply and appends it; undefined when the window has no room. */
  async generate(sampling: AgentSampling): Promise<Generation | undefined> {
    const opening = appendedTokens(this.format, this.messages, [], { tools: this.tools, addGenerationPrompt: true });
    const prompt = [...this.record.tokens, ...opening];
    if (prompt.length + sampling.maxNewTokens + this.format.turnEnd.length > this.policy.contextWindow)
      return undefined;
    const generation = await this.policy.generate({ ...sampling, prompt, stopTokens: this.stopTokens });
    this.record.appendContext(opening);
    this.record.appendReply(generation, { closing: replyClosing(this.format, generation.tokens) });
    this.messages.push({ role: 'assistant', content: generation.text });
    return generation;
  }

  /**
   * Appends an observation (a user or tool message, or several) answering the latest reply. The
   * tool results of one reply go in together: templates that group consecutive results into one
   * turn (Qwen2.5's `<tool_response>` blocks) close the turn only after the last.
   */
  observe(
    observation: Message | readonly Message[],
    { invalidAction = false }: { invalidAction?: boolean } = {},
  ): void {
    const messages: readonly Message[] = Array.isArray(observation) ? observation : [observation as Message];
    this.record.appendContext(appendedTokens(this.format, this.messages, messages, { tools: this.tools }));
    for (const message of messages) this.messages.push(message);
    this.record.observe(
      messages.map((message) => message.content),
      { invalidAction },
    );
  }

  /** Adds a reward to the latest turn (on its last generated token). */
  reward(value: number): void {
    this.record.reward(value);
  }

  toTrajectory({
    success,
    truncated,
    groupId = 'agent',
    seed = 0,
  }: {
    success: boolean;
    truncated: boolean;
    groupId?: string;
    seed?: number;
  }): Trajectory {
    return this.record.trajectory({ success, truncated, groupId, seed });
  }
}

/** Shortens text for an observation ("…" past `max` characters). */
export function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Adds a reward to a trajectory's last turn (on its last generated token), e.g. a task score
 * computed after the scaffold finished. Returns the same trajectory.
 */
export function rewardFinalTurn(trajectory: Trajectory, reward: number): Trajectory {
  const turn = trajectory.turns.at(-1);
  if (turn === undefined) return trajectory;
  turn.reward += reward;
  if (trajectory.segments === undefined)
    trajectory.tokenRewards[turn.end - 1] = at(trajectory.tokenRewards, turn.end - 1, 'tokenRewards') + reward;
  trajectory.totalReward += reward;
  return trajectory;
}
