/** Deterministic synthetic steps for the store tests: every value is a function of the step. */
import type { StepRecord, TrajectoryRecord } from './types.ts';

export function syntheticTrajectory(step: number, index: number, length: number): Omit<TrajectoryRecord, 'step'> {
  const tokens = Array.from({ length }, (_, i) => (step * 31 + index * 7 + i) % 256);
  const lossMask = tokens.map((_, i) => (i >= length / 2 ? 1 : 0));
  return {
    index,
    groupId: `g${step}`,
    seed: step * 10 + index,
    totalReward: index === 0 ? 1 : 0,
    success: index === 0,
    truncated: false,
    messages: [
      { role: 'user', content: `observation ${step}` },
      { role: 'assistant', content: `action ${step}.${index}` },
    ],
    tokens,
    pieces: tokens.map((t) => String.fromCharCode(97 + (t % 26))),
    lossMask,
    logprobs: lossMask.map((m, i) => (m === 1 ? -0.01 * i : 0)),
    rewards: tokens.map((_, i) => (i === length - 1 && index === 0 ? 1 : 0)),
    advantages: lossMask.map((m) => (m === 1 ? (index === 0 ? 0.5 : -0.5) : 0)),
    turns: [
      {
        start: length / 2,
        end: length,
        reward: index === 0 ? 1 : 0,
        action: `action ${step}.${index}`,
        observation: '',
        invalidAction: false,
      },
    ],
  };
}

export function syntheticStep(step: number, tokensPerTrajectory: number): StepRecord {
  return {
    step,
    metrics: {
      reward: step / 2,
      success: (step % 4) / 4,
      kl: step * 1e-3,
      entropy: 1 / step,
      loss: -step,
      rolloutTokensPerSecond: 100 + step,
    },
    trajectories: [0, 1].map((index) => syntheticTrajectory(step, index, tokensPerTrajectory)),
    checkpoint: { kind: 'resume', state: new Uint8Array(4096).fill(step % 251) },
  };
}
