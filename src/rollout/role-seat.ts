/**
 * One agent's seat in a multi-agent episode (multi-agent-rollout.ts): the role's own conversation
 * in token space — the system prompt, the observations addressed to it, its own replies — rendered
 * in its player's chat format, kept as ids end to end (never re-tokenized), as rollout.ts keeps a
 * single agent's. The other agents' replies never enter it: a role sees what the env shows it.
 *
 *   <|bos|><|system|>{instructions}<|end|><|user|>{o_0 for this role}<|end|><|assistant|>{a}<|end|><|user|>{next o for this role}…
 *
 * A scripted expert's seat records nothing (it is an opponent, never trained).
 *
 * Reward components: the env's named components of each step (`info.rewardComponents`) are summed
 * into every role the role spec pays for that step (`stepRewards` names it) — a negotiation deal's
 * `deal` into both agents, an invalid turn's `invalidAction` into the actor only — checked as
 * rollout.ts checks a single agent's (a bad name or a non-finite value is a named failure).
 */
import { replyClosing, TokenTranscript } from '../agents/token-transcript.ts';
import { agentrlChatFormat, type ChatFormat } from '../chat/chat-format.ts';
import { stopTokensOf } from '../chat/policy-chat-format.ts';
import type { Observation } from '../core/types.ts';
import type { Expert } from '../envs/expert.ts';
import type { Generation, Policy } from '../policy/types.ts';

/** The names `reward()` accepts (src/rewards/reward.ts; the same check as rollout/episode.ts): metric-key safe. */
const componentNamePattern = /^[a-z][A-Za-z0-9_-]{0,63}$/;

/** Who plays a role: a policy (several roles may share one), or a scripted expert made per episode. */
export type RolePlayer = { policy: Policy } | { expert: (episode: { seed: number; index: number }) => Expert };

/** What a policy seat renders with: its player's chat format and context window, the rollout's reply budget. */
export interface SeatSettings {
  chatFormat: ChatFormat;
  contextWindow: number;
  /** Room kept free after a prompt: maxNewTokens + 1 (a cut reply is closed by the turn end). */
  reserve: number;
  /** The env's instructions as a system message (undefined: none). */
  instructions: string | undefined;
}

export function seatSettings(
  policy: Policy,
  { maxNewTokens, instructions }: { maxNewTokens: number; instructions: string | undefined },
): SeatSettings {
  return {
    chatFormat: policy.chatFormat ?? agentrlChatFormat(policy.tokenizer),
    contextWindow: policy.contextWindow,
    reserve: maxNewTokens + 1,
    instructions,
  };
}

/** A policy's seat: the role's transcript, and the ids the policy continues from. */
export class PolicySeat {
  readonly transcript = new TokenTranscript();
  /** The context the next reply is generated from. */
  prompt: readonly number[] = [];
  readonly stopTokens: number[];

  constructor(
    readonly role: string,
    readonly policy: Policy,
    readonly settings: SeatSettings,
  ) {
    this.stopTokens = stopTokensOf(settings.chatFormat);
  }

  /**
   * Appends an observation addressed to this role and the generation prompt: the whole first
   * prompt (system + user) at the role's first turn, a user turn after. False when the prompt would
   * leave no room for a full reply (the episode then ends, truncated, before it is appended).
   */
  observe(observation: Observation): boolean {
    const { chatFormat, contextWindow, reserve, instructions } = this.settings;
    const next =
      this.transcript.tokens.length === 0
        ? chatFormat.render(
            [
              ...(instructions === undefined ? [] : [{ role: 'system' as const, content: instructions }]),
              { role: 'user' as const, content: observation.text },
            ],
            { addGenerationPrompt: true },
          ).tokens
        : chatFormat.userTurn(observation.text);
    if (this.transcript.tokens.length + next.length + reserve > contextWindow) return false;
    this.transcript.appendContext(next);
    this.prompt = [...this.transcript.tokens];
    return true;
  }

  /** Appends the generated reply (lossMask 1) and its closing; false when it is empty or passes the window. */
  reply(generation: Generation): boolean {
    const closing = replyClosing(this.settings.chatFormat, generation.tokens);
    if (
      generation.tokens.length === 0 ||
      this.transcript.tokens.length + generation.tokens.length + closing.length > this.settings.contextWindow
    )
      return false;
    this.transcript.appendReply(generation, { closing });
    return true;
  }

  /** The env's components of the steps that paid this role, summed; undefined while none came. */
  rewardComponents: Record<string, number> | undefined;
  /** Components that could not be summed (name → reason): the trajectory is then not trained on. */
  rewardFailures: Record<string, string> | undefined;

  /** Sums a step's components into the role's (a bad name or a non-finite value is that component's failure, never 0). */
  addRewardComponents(components: Readonly<Record<string, unknown>> | undefined): void {
    if (components === undefined) return;
    const turn = this.transcript.turns.length - 1;
    for (const [name, value] of Object.entries(components)) {
      if (!componentNamePattern.test(name)) {
        this.rewardFailures ??= {};
        this.rewardFailures.rewardComponents ??= `the env reported a component named ${JSON.stringify(name.slice(0, 80))} at turn ${turn}: not a reward name (a-z, A-Z, 0-9, _ or -, starting with a lower-case letter)`;
        continue;
      }
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        this.rewardFailures ??= {};
        this.rewardFailures[name] ??= `the env reported ${String(value)} at turn ${turn}, not a finite number`;
        continue;
      }
      this.rewardComponents ??= {};
      this.rewardComponents[name] = (this.rewardComponents[name] ?? 0) + value;
    }
  }

  /** Whether the role has played a turn (only then it has a trajectory and can be paid). */
  get acted(): boolean {
    return this.transcript.turns.length > 0;
  }
}
