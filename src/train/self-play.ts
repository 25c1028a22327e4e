/**
 * Self-play helpers for the Absolute Zero env (envs/absolute-zero): `policySolver` turns a policy
 * into the env's solver — n sampled attempts at a solve prompt, rendered as a single user turn in
 * the policy's chat format (`chatFormatOf`: its own template and stop tokens, else agentrl's) — so the proposer's learnability reward is measured with the very policy
 * being trained:
 *
 *   const policy = new BuiltinPolicy({ model });
 *   await runRl({ policy, env: () => makeAbsoluteZero({}, { solver: policySolver(policy) }), config: { algo: 'grpo' } });
 */
import type { Solver } from '../envs/absolute-zero/env.ts';
import { chatFormatOf, stopTokensOf, userPrompt } from '../chat/policy-chat-format.ts';
import type { Policy } from '../policy/types.ts';

export interface PolicySolverOptions {
  /** Tokens per attempt. Default 32. */
  maxNewTokens?: number;
  /** Sampling temperature of the attempts. Default 1. */
  temperature?: number;
  /** Seed of the first call's samples; each call advances it. Default 0. */
  seed?: number;
}

export function policySolver(policy: Policy, options: PolicySolverOptions = {}): Solver {
  const { maxNewTokens = 32, temperature = 1 } = options;
  const format = chatFormatOf(policy);
  const stopTokens = stopTokensOf(format);
  let seed = options.seed ?? 0;
  return async (prompt, count) => {
    const tokens = userPrompt(format, prompt);
    if (tokens.length + maxNewTokens > policy.contextWindow) return [];
    const generations = await policy.generateBatch(
      Array.from({ length: count }, (_, i) => ({
        prompt: tokens,
        maxNewTokens,
        temperature,
        stopTokens,
        seed: seed + i,
      })),
    );
    seed += count;
    return generations.map((generation) => generation.text);
  };
}
