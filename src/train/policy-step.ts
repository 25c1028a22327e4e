/**
 * How the trainers take one optimizer step and what they refuse, through the `TrainablePolicy`
 * contract only. `policyStep` uses the backend's fused `trainStep` when it has one (the built-in
 * engine: one compiled forward + backward + AdamW call), else `forwardBackward` + `optimStep` —
 * the same update (tested in policy-step.test.ts). `requireCapabilities` refuses, before any
 * rollout, an algorithm the backend cannot run, naming both.
 */
import { UnsupportedCapabilityError } from '../core/errors.ts';
import type { TokenLoss } from '../core/loss.ts';
import type { OptimOptions, StepReport, TrainablePolicy } from '../policy/types.ts';

export async function policyStep(
  policy: TrainablePolicy,
  batch: { sequences: readonly (readonly number[])[]; temperature?: number },
  loss: TokenLoss,
  options: OptimOptions,
): Promise<StepReport> {
  if (policy.trainStep !== undefined) return policy.trainStep(batch, loss, options);
  const report = await policy.forwardBackward(batch, loss);
  const step = await policy.optimStep(options);
  return { ...report, gradNorm: step.gradNorm, step: step.step };
}

export interface CapabilityNeeds {
  /** What is being run, for the message: 'RL algorithm ppo', 'the SFT warm start'. */
  what: string;
  /** PPO's critic. */
  valueHead?: boolean;
  entropyCoef?: number;
  maxGradNorm?: number;
}

export function requireCapabilities(
  policy: TrainablePolicy,
  { what, valueHead = false, entropyCoef = 0, maxGradNorm = 0 }: CapabilityNeeds,
): void {
  const { backend, capabilities } = policy;
  if (valueHead && (!capabilities.valueHead || policy.values === undefined)) {
    const fix =
      backend === 'builtin'
        ? 'create the model with valueHead: true'
        : `the ${backend} backend has no value head; use a critic-free algorithm (grpo, dr-grpo, rloo, reinforce++, dapo, gspo, cispo) or the builtin backend`;
    throw new UnsupportedCapabilityError(
      { backend, feature: 'valueHead', needed: what },
      `${what} trains a critic (a value head): ${fix}`,
    );
  }
  if (entropyCoef !== 0 && !capabilities.entropy) {
    throw new UnsupportedCapabilityError(
      { backend, feature: 'entropy', needed: what },
      `${what} has an entropy bonus (entropyCoef ${entropyCoef}), but the ${backend} backend cannot train an entropy term; set entropyCoef 0`,
    );
  }
  if (maxGradNorm > 0 && !capabilities.gradientClipping) {
    throw new UnsupportedCapabilityError(
      { backend, feature: 'gradientClipping', needed: what },
      `${what} clips the gradient norm (maxGradNorm ${maxGradNorm}), but the ${backend} backend cannot clip; set maxGradNorm 0 (--max-grad-norm 0)`,
    );
  }
}
