/**
 * Two-armed (or n-armed) bandit, a smoke-test env after RAGEN's: one turn, the agent names an
 * arm (`<answer>B</answer>`, name case-insensitive or 1-based number); the arm pays 1 with its
 * probability, drawn from the episode seed. Which arm is better is fixed by the options, so a
 * policy can learn it. Success = the better arm was chosen (a deterministic signal, unlike the
 * payout). An invalid answer scores −formatPenalty and ends (truncates) the episode.
 * Named components: `paid` (outcome: 1 when the arm paid) − formatPenalty · `invalid_action` (penalty).
 */
import { z } from 'zod';
import { Rng, type Action, type Env, type Observation, type StepResult } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { parseMoveAction } from '../action-format.ts';
import { runningEpisode } from '../episode-turns.ts';
import { parseOptions } from '../options.ts';
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import { invalidActionReward, scoreStep } from '../step-reward.ts';

export const banditOptionsSchema = z
  .strictObject({
    /** Arm names, shown to the agent. */
    arms: z
      .array(z.string().regex(/^[A-Za-z0-9]+$/))
      .min(2)
      .default(['A', 'B']),
    /** Probability that each arm pays 1 (same order as `arms`); one must be the highest. */
    payProbabilities: z.array(z.number().min(0).max(1)).min(2).default([0.2, 0.8]),
    /** Subtracted from the reward of an invalid answer. */
    formatPenalty: z.number().min(0).default(0),
  })
  .refine((o) => o.arms.length === o.payProbabilities.length, {
    message: 'arms and payProbabilities need the same length',
  })
  .refine((o) => new Set(o.arms.map((arm) => arm.toLowerCase())).size === o.arms.length, {
    message: 'arm names must differ',
  })
  .refine((o) => o.payProbabilities.filter((p) => p === Math.max(...o.payProbabilities)).length === 1, {
    message: 'exactly one arm must have the highest payProbability',
  });
export type BanditOptions = z.input<typeof banditOptionsSchema>;

/** `observation.data`: the arms. */
export interface BanditData {
  arms: string[];
}

/** `observation.privileged`: the arms' pay probabilities (for the expert). */
export interface BanditPrivileged {
  payProbabilities: number[];
}

/** What the reward functions see of the bandit's one turn. */
interface BanditStep {
  invalid: boolean;
  paid: boolean;
}

function banditRubric(formatPenalty: number): Rubric<BanditStep> {
  const paid = reward<BanditStep>('paid', (step) => (step.paid ? 1 : 0));
  return rubric([paid, invalidActionReward<BanditStep>((step) => step.invalid)], [1, -formatPenalty]);
}

export class BanditEnv implements Env<Record<string, never>> {
  readonly name = 'bandit';
  readonly instructions: string;
  private readonly options: z.output<typeof banditOptionsSchema>;
  private episode: { payout: Rng; ended: boolean } | null = null;
  readonly rewardComponents: Rubric<BanditStep>;

  constructor(options: BanditOptions = {}) {
    this.options = parseOptions(banditOptionsSchema, options, 'bandit');
    this.rewardComponents = banditRubric(this.options.formatPenalty);
    const { arms } = this.options;
    this.instructions = `Bandit: pick the arm that pays most often. Arms: ${arms.join(', ')}. Reply <think>...</think><answer>${arms[0]}</answer>.`;
  }

  async reset({ seed }: { seed: number }): Promise<Observation> {
    this.episode = { payout: new Rng(seed), ended: false };
    return this.observe(`Arms: ${this.options.arms.join(', ')}`);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = runningEpisode(this.name, this.episode);
    episode.ended = true;
    const { arms, payProbabilities } = this.options;
    const parsed = parseMoveAction(action, { moves: arms, maxActionsPerTurn: 1 });
    if (parsed.kind === 'invalid') {
      const info = { invalidAction: true, reason: parsed.reason, success: false };
      const observation = this.observe(`invalid: ${parsed.reason}`);
      const step = { observation, done: false, truncated: true, info };
      return scoreStep(this.name, this.rewardComponents, { invalid: true, paid: false }, step);
    }
    const arm = at(parsed.moves, 0, 'moves');
    const paid = episode.payout.next() < at(payProbabilities, arm, 'arms');
    const success = payProbabilities[arm] === Math.max(...payProbabilities);
    return scoreStep(
      this.name,
      this.rewardComponents,
      { invalid: false, paid },
      {
        observation: this.observe(`${arms[arm]} paid ${paid ? 1 : 0}`),
        done: true,
        truncated: false,
        info: { invalidAction: false, arm: arms[arm], success },
      },
    );
  }

  private observe(text: string): Observation {
    const data: BanditData = { arms: [...this.options.arms] };
    const privileged: BanditPrivileged = { payProbabilities: [...this.options.payProbabilities] };
    return { text, data, privileged };
  }
}

export function makeBandit(options: BanditOptions = {}): BanditEnv {
  return new BanditEnv(options);
}
