/**
 * `POST /v1/sessions/{id}/reward {"reward": number, "success"?: boolean}`: what a client may post.
 *
 * The reward is a finite number inside the gateway's `rewardRange` (default [−1e6, 1e6]); anything
 * else (a string, 1e308, 1e309 which JSON reads as Infinity, NaN which is not JSON) is a 400. A
 * session's reward is set once: posting again is a 409, unless the caller presents the secret of
 * the client session (session-secret.ts), which may change its own score. A trainer-opened
 * session's reward can be posted once by its agent and never changed over HTTP.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../core/errors.ts';
import { RequestError } from '../error-bodies.ts';
import type { Session } from './session-store.ts';
import { isSessionSecret, notSessionOwner } from './session-secret.ts';

/** The rewards a client may post. */
export const rewardRangeSchema = z
  .object({
    /** The lowest reward accepted. Default −1e6. */
    min: z.number().finite().default(-1e6).describe('the lowest reward a client may post'),
    /** The highest reward accepted. Default 1e6. */
    max: z.number().finite().default(1e6).describe('the highest reward a client may post'),
  })
  .refine(({ min, max }) => min <= max, { message: 'rewardRange.min must be at most rewardRange.max' });

export type RewardRange = z.output<typeof rewardRangeSchema>;
export type RewardRangeInput = z.input<typeof rewardRangeSchema>;

/** The gateway's reward range, or an InvalidArgumentError naming what is wrong with it. */
export function parseRewardRange(input: RewardRangeInput | undefined): RewardRange {
  const parsed = rewardRangeSchema.safeParse(input ?? {});
  if (!parsed.success)
    throw new InvalidArgumentError(
      `rewardRange must be {min, max}, finite numbers with min <= max: ${z.prettifyError(parsed.error)}`,
      { param: 'rewardRange', rewardRange: input },
    );
  return parsed.data;
}

/** The reward a request body posts, or a 400 naming the accepted form and range. */
export function postedReward(body: unknown, { min, max }: RewardRange): { reward: number; success: boolean } {
  const schema = z.object({ reward: z.number().finite().min(min).max(max), success: z.boolean().optional() });
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new RequestError(
      400,
      `expected {"reward": <finite number in [${min}, ${max}]>, "success"?: <boolean>}: ${z.prettifyError(parsed.error)}`,
      String(parsed.error.issues[0]?.path[0] ?? 'reward'),
      'invalid_reward',
    );
  return { reward: parsed.data.reward, success: parsed.data.success ?? parsed.data.reward > 0 };
}

/**
 * Sets the session's reward, once; again only with the client session's secret. A secret that is
 * not the session's is refused even for the first reward (a client naming another's session).
 */
export function scoreOnce(session: Session, score: Session['reward'], presented: string | undefined): void {
  const owner = session.secretHash !== undefined && isSessionSecret(session.secretHash, presented);
  if (session.secretHash !== undefined && presented !== undefined && !owner)
    throw notSessionOwner(session.id, 'scoring it');
  if (session.reward !== undefined && !owner)
    throw new RequestError(
      409,
      `session '${session.id}' already has its reward (${session.reward.reward}); a reward is set once, and changed only by the client that opened the session (its secret)`,
      'reward',
      'reward_already_set',
    );
  session.reward = score;
}
