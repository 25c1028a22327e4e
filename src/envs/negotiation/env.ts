/**
 * Negotiation, a two-agent game (game.ts) for multi-agent RL: Alice and Bob act in turn, each
 * seeing only its own values. A turn is `<answer>take 2 0 1</answer>` (books hats balls the
 * speaker keeps) or `<answer>accept</answer>` (the other's last proposal). `observation.data.agent`
 * says who acts next, so two policies can play (route by agent) or one shared policy plays both
 * (MAGRPO-style: the whole game is one trajectory, trained with GRPO on the joint reward).
 *
 * Rewards per agent: on a deal, each agent's value of its share / 10; no deal → 0 each
 * (`info.agentRewards`). The step reward is the joint reward, their mean, on the final step.
 * Named components: `deal` (outcome: the joint reward) − formatPenalty · `invalid_action` (penalty).
 * Success = a deal that reaches the largest possible joint value. Invalid turn: −formatPenalty
 * and the same agent acts again; truncated (no deal) after `maxTurns` turns.
 */
import { z } from 'zod';
import { Rng, type Action, type Env, type Observation, type StepResult } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { parseAction } from '../action-format.ts';
import { closeTurn, openTurn } from '../episode-turns.ts';
import { parseOptions } from '../options.ts';
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import { invalidActionReward, scoreStep } from '../step-reward.ts';
import {
  agentNames,
  generateNegotiation,
  itemNames,
  itemValue,
  maxJointValue,
  restOf,
  shareValue,
  type NegotiationTask,
} from './game.ts';

export const negotiationOptionsSchema = z.strictObject({
  /** Turns (both agents together) before the game ends without a deal. */
  maxTurns: z.number().int().min(2).default(6),
  /** Subtracted from the reward of an invalid turn. */
  formatPenalty: z.number().min(0).default(0),
});
export type NegotiationOptions = z.input<typeof negotiationOptionsSchema>;

/** A proposal: who made it and the share the proposer keeps. */
export interface Proposal {
  by: number;
  share: number[];
}

/** `observation.data`: what the acting agent may see — the item counts, its own values, who acts, the last proposal (proposer's share). */
export interface NegotiationData {
  counts: number[];
  /** The acting agent's values per item type. */
  ownValues: number[];
  agent: number;
  proposal: Proposal | null;
}

/** `observation.privileged`: the task with both agents' private values (for scripted experts and a joint trainer). */
export interface NegotiationPrivileged {
  task: NegotiationTask;
}

interface NegotiationEpisode {
  task: NegotiationTask;
  agent: number;
  proposal: Proposal | null;
  turnsUsed: number;
  ended: boolean;
}

/** What the reward functions see of one negotiation turn. */
interface NegotiationStep {
  invalid: boolean;
  /** Each agent's value of its share / 10 when a proposal was accepted, else null. */
  agentRewards: readonly number[] | null;
}

function negotiationRubric(formatPenalty: number): Rubric<NegotiationStep> {
  const deal = reward<NegotiationStep>('deal', ({ agentRewards }) =>
    agentRewards === null ? 0 : ((agentRewards[0] ?? 0) + (agentRewards[1] ?? 0)) / 2,
  );
  return rubric([deal, invalidActionReward<NegotiationStep>((step) => step.invalid)], [1, -formatPenalty]);
}

export class NegotiationEnv implements Env<NegotiationTask> {
  readonly name = 'negotiation';
  readonly instructions =
    'Two agents split books, hats and balls; you see only your own values. Reply <answer>take 2 0 1</answer> to propose keeping ' +
    '2 books, 0 hats, 1 ball (the rest goes to the other), or <answer>accept</answer> to accept their last proposal. No deal scores 0.';
  private readonly options: z.output<typeof negotiationOptionsSchema>;
  private episode: NegotiationEpisode | null = null;
  readonly rewardComponents: Rubric<NegotiationStep>;

  constructor(options: NegotiationOptions = {}) {
    this.options = parseOptions(negotiationOptionsSchema, options, 'negotiation');
    this.rewardComponents = negotiationRubric(this.options.formatPenalty);
  }

  async reset({ seed, task }: { seed: number; task?: NegotiationTask }): Promise<Observation> {
    this.episode = {
      task: task ?? generateNegotiation(new Rng(seed)),
      agent: 0,
      proposal: null,
      turnsUsed: 0,
      ended: false,
    };
    return this.observe(this.episode);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = openTurn(this.name, this.episode);
    const move = this.readMove(episode, action);
    const noDeal = { agentRewards: [0, 0] };
    if (typeof move === 'string') {
      const close = closeTurn(episode, this.options.maxTurns, { invalidAction: true, reason: move }, noDeal);
      const step = { observation: this.observe(episode, `invalid: ${move}`), ...close };
      return scoreStep(this.name, this.rewardComponents, { invalid: true, agentRewards: null }, step);
    }
    if ('accept' in move) {
      const { by, share } = move.accept;
      const rest = restOf(episode.task, share);
      const [alice, bob] = by === 0 ? [share, rest] : [rest, share];
      const [aliceValue, bobValue] = [shareValue(episode.task, 0, alice), shareValue(episode.task, 1, bob)];
      const agentRewards = [aliceValue / 10, bobValue / 10];
      const success = aliceValue + bobValue === maxJointValue(episode.task);
      episode.ended = true;
      const observation = this.observe(episode, `deal: Alice ${alice.join(' ')}, Bob ${bob.join(' ')}`);
      const step = { observation, done: true, truncated: false, info: { invalidAction: false, success, agentRewards } };
      return scoreStep(this.name, this.rewardComponents, { invalid: false, agentRewards }, step);
    }
    episode.proposal = { by: episode.agent, share: move };
    episode.agent = 1 - episode.agent;
    const close = closeTurn(episode, this.options.maxTurns, { invalidAction: false }, noDeal);
    const step = { observation: this.observe(episode, close.truncated ? 'no deal' : undefined), ...close };
    return scoreStep(this.name, this.rewardComponents, { invalid: false, agentRewards: null }, step);
  }

  /** The accepted proposal, the proposer's share, or why the turn is invalid. */
  private readMove(episode: NegotiationEpisode, action: Action): { accept: Proposal } | number[] | string {
    if (action.toolCall) return 'no tools here; reply <answer>take b h k</answer> or <answer>accept</answer>';
    const parsed = parseAction(action.text);
    if (parsed.kind === 'invalid') return parsed.reason;
    if (parsed.kind === 'tool_call')
      return 'no tools here; reply <answer>take b h k</answer> or <answer>accept</answer>';
    const answer = parsed.answer.trim().toLowerCase();
    if (answer === 'accept')
      return episode.proposal === null
        ? 'nothing to accept yet; propose with take b h k'
        : { accept: episode.proposal };
    const match = answer.match(/^take\s+(\d+)\s+(\d+)\s+(\d+)$/);
    if (match === null) return 'reply take b h k (three counts) or accept';
    const share = match.slice(1, 4).map(Number);
    if (share.some((count, i) => count > at(episode.task.counts, i, 'item types')))
      return `you can take at most ${episode.task.counts.join(' ')}`;
    return share;
  }

  private observe(episode: NegotiationEpisode, note?: string): Observation {
    const { task, agent, proposal } = episode;
    const lines = [
      `You are ${agentNames[agent]}. Items: ${itemNames.map((name, i) => `${name} ${task.counts[i]}`).join(', ')}.`,
      `Your values: ${itemNames.map((name, i) => `${name} ${itemValue(task, agent, i)}`).join(', ')}.`,
    ];
    if (proposal !== null) lines.push(`${agentNames[proposal.by]} proposed to take ${proposal.share.join(' ')}.`);
    if (note !== undefined) lines.push(note);
    const ownValues = itemNames.map((_, i) => itemValue(task, agent, i));
    const data: NegotiationData = { counts: [...task.counts], ownValues, agent, proposal };
    const privileged: NegotiationPrivileged = { task };
    return { text: lines.join('\n'), data, privileged };
  }
}

export function makeNegotiation(options: NegotiationOptions = {}): NegotiationEnv {
  return new NegotiationEnv(options);
}
