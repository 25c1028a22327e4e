/**
 * Training presets: per environment, the settings under which the built-in model (≈1M parameters,
 * from scratch, on 2 CPU cores) learns within minutes — a map small enough for it to read, a reply
 * budget that fits the action, a warm start long enough to learn the format, and an RL learning
 * rate that improves the policy without breaking that format. `npm run bench:learning` measures
 * them (README, "Learning"); `agentrl train` starts from them, under config files and flags.
 */
import type { RlConfigInput } from './rl.ts';
import type { WarmStartConfig } from './warm-start.ts';

export interface TrainingPreset {
  envOptions: Record<string, unknown>;
  warm: Partial<WarmStartConfig>;
  rl: RlConfigInput;
}

export const trainingPresets: Readonly<Record<string, TrainingPreset>> = {
  'frozen-lake': {
    envOptions: { size: 3 },
    warm: { demonstrations: 1024, sftSteps: 500, sftBatchSize: 32, randomActionRate: 0.5 },
    rl: { iterations: 40, learningRate: 5e-5, validateEvery: 10 },
  },
  sokoban: {
    envOptions: { width: 5, height: 5, maxSteps: 6, formatPenalty: 0.1 },
    warm: { demonstrations: 4096, sftSteps: 2000, sftBatchSize: 32, sftLearningRate: 1e-3, randomActionRate: 0.35 },
    rl: {
      iterations: 40,
      learningRate: 5e-5,
      tasksPerIteration: 16,
      groupSize: 4,
      validateEvery: 10,
      detachValueHead: true,
    },
  },
  calculator: {
    envOptions: { numOperands: 2, maxOperand: 9 },
    warm: { demonstrations: 512, sftSteps: 800, sftBatchSize: 32, randomActionRate: 0.5 },
    rl: { iterations: 30, learningRate: 5e-5, maxTurns: 4, maxNewTokens: 128 },
  },
};

/** A preset as flat `agentrl train` option values (`envOptions` as JSON text); {} for envs without one. */
export function presetOptions(env: string): Record<string, unknown> {
  const preset = trainingPresets[env];
  if (preset === undefined) return {};
  return { envOptions: JSON.stringify(preset.envOptions), ...preset.warm, ...preset.rl };
}
