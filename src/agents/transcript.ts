/**
 * A conversation kept in token space for the agent scaffolds, so that what they run is a
 * `Trajectory` the RL trainer uses unchanged (ids end to end, never re-tokenized):
 *
 *   <|bos|> system user  <|assistant|> reply₁ <|end|>  observation₁  <|assistant|> reply₂ <|end|> …
 *
 * - `reply` ids are the policy's own generation (lossMask 1, its sampling log-probs); a reply cut
 *   by `maxNewTokens` is closed with `<|end|>` (lossMask 0);
 * - everything else (prompt, observations, tool results) has lossMask 0;
 * - `reward(r)` puts a reward on the last generated token of the latest turn.
 *
 * `generate` refuses (returns undefined) when the next prompt would not leave room for a full
 * reply in the policy's context window: the scaffold ends the episode as truncated.
 */
import type { Message, Trajectory, Turn } from '../core/types.ts';
import { renderChat, renderMessage } from '../model/chat-template.ts';
import type { Generation, Policy, SamplingOptions } from '../policy/types.ts';

export type AgentSampling = Omit<SamplingOptions, 'stopTokens'>;

export class Transcript {
  readonly messages: Message[];
  readonly tokens: number[];
  readonly lossMask: number[] = [];
  readonly logprobs: number[] = [];
  readonly tokenRewards: number[] = [];
  readonly turns: Turn[] = [];
  private readonly policy: Policy;

  constructor(policy: Policy, messages: readonly Message[]) {
    this.policy = policy;
    this.messages = [...messages];
    this.tokens = [];
    this.push(renderChat(messages, { tokenizer: policy.tokenizer }).tokens, 0);
  }

  /** Generates the next assistant reply and appends it; undefined when the window has no room. */
  async generate(sampling: AgentSampling): Promise<Generation | undefined> {
    const { tokenizer } = this.policy;
    const prompt = [...this.tokens, tokenizer.specialTokens.assistant];
    if (prompt.length + sampling.maxNewTokens + 1 > this.policy.contextWindow) return undefined;
    const generation = await this.policy.generate({ ...sampling, prompt });
    this.push([tokenizer.specialTokens.assistant], 0);
    const start = this.tokens.length;
    this.push(generation.tokens, 1, generation.logprobs);
    const end = this.tokens.length;
    if (generation.tokens.at(-1) !== tokenizer.specialTokens.end) this.push([tokenizer.specialTokens.end], 0);
    this.messages.push({ role: 'assistant', content: generation.text });
    this.turns.push({ start, end, reward: 0, action: generation.text, observation: '', invalidAction: false });
    return generation;
  }

  /** Appends an observation (a user or tool message) answering the latest reply. */
  observe(message: Message, { invalidAction = false }: { invalidAction?: boolean } = {}): void {
    this.messages.push(message);
    this.push(renderMessage(message, { tokenizer: this.policy.tokenizer }).tokens, 0);
    const turn = this.turns.at(-1);
    if (turn !== undefined) {
      turn.observation = turn.observation === '' ? message.content : `${turn.observation}\n${message.content}`;
      turn.invalidAction ||= invalidAction;
    }
  }

  /** Adds a reward to the latest turn (on its last generated token). */
  reward(value: number): void {
    const turn = this.turns.at(-1);
    if (turn === undefined || value === 0) return;
    turn.reward += value;
    this.tokenRewards[turn.end - 1]! += value;
  }

  toTrajectory({ success, truncated, groupId = 'agent', seed = 0 }: { success: boolean; truncated: boolean; groupId?: string; seed?: number }): Trajectory {
    return {
      tokens: [...this.tokens],
      lossMask: [...this.lossMask],
      logprobs: [...this.logprobs],
      tokenRewards: [...this.tokenRewards],
      turns: this.turns.map((turn) => ({ ...turn })),
      totalReward: this.turns.reduce((sum, turn) => sum + turn.reward, 0),
      success,
      groupId,
      seed,
      truncated,
    };
  }

  private push(tokens: readonly number[], mask: 0 | 1, logprobs?: readonly number[]): void {
    tokens.forEach((token, i) => {
      this.tokens.push(token);
      this.lossMask.push(mask);
      this.logprobs.push(mask === 1 ? (logprobs?.[i] ?? 0) : 0);
      this.tokenRewards.push(0);
    });
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
  if (trajectory.segments === undefined) trajectory.tokenRewards[turn.end - 1]! += reward;
  trajectory.totalReward += reward;
  return trajectory;
}
