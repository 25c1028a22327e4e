/**
 * Supervised fine-tuning: next-token negative log-likelihood on the assistant's tokens only
 * (prompts, user turns and tool outputs are masked), over chat conversations rendered with the
 * model's chat template. Fixed-size minibatches (the last one wraps around) keep the compiled
 * shapes few; the learning rate follows warm-up + cosine. Trains any `TrainablePolicy` (each step
 * `policyStep`: the fused `trainStep` when the backend has one, else forwardBackward + optimStep).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { Message } from '../core/types.ts';
import { sftLoss } from '../algorithms/index.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { renderChat } from '../chat/chat-template.ts';
import type { Tokenizer } from '../chat/tokenizer.ts';
import type { ChatFormat } from '../chat/chat-format.ts';
import { learningRateAt } from './schedule.ts';
import { policyStep, requireCapabilities } from './policy-step.ts';

export const sftConfigSchema = z.object({
  /** Optimizer steps. */
  steps: z.number().int().positive().default(300).describe('optimizer steps'),
  /** Conversations per step. */
  batchSize: z.number().int().positive().default(16).describe('conversations per step'),
  /** Peak learning rate (after warm-up). */
  learningRate: z.number().positive().default(3e-3).describe('peak learning rate'),
  /** Linear warm-up steps. */
  warmupSteps: z.number().int().nonnegative().default(10).describe('linear warm-up steps'),
  /** Final learning rate as a fraction of the peak (cosine decay). */
  minLearningRateRatio: z.number().min(0).max(1).default(0.1).describe('final lr / peak lr'),
  /** Global gradient-norm clip. */
  maxGradNorm: z.number().nonnegative().default(1).describe('global gradient-norm clip (0 = off)'),
  /** AdamW decoupled weight decay on matrices. */
  weightDecay: z.number().nonnegative().default(0).describe('AdamW weight decay on matrices'),
  /** Held-out loss is computed every this many steps (and at the end). */
  evalEvery: z.number().int().positive().default(50).describe('held-out evaluation interval (steps)'),
  /** Shuffling seed. */
  seed: z.number().int().default(0).describe('shuffling seed'),
});
export type SftConfig = z.infer<typeof sftConfigSchema>;
export type SftConfigInput = z.input<typeof sftConfigSchema>;

export interface SftExample {
  tokens: number[];
  mask: number[];
}

export interface SftProgress {
  step: number;
  totalSteps: number;
  loss: number;
  learningRate: number;
  gradNorm: number;
  heldOutLoss?: number;
  tokensPerSecond: number;
}

export interface SftResult {
  finalLoss: number;
  heldOutLoss?: number;
  /** Conversations cut at the context window. */
  truncated: number;
  history: SftProgress[];
}

/** Renders conversations to token ids + assistant masks (agentrl's byte template for a tokenizer, else the chat format's), cut to the context window. */
export function renderExamples(
  conversations: readonly { messages: Message[] }[],
  format: Tokenizer | Pick<ChatFormat, 'render'>,
  maxSeqLen: number,
): { examples: SftExample[]; truncated: number } {
  let truncated = 0;
  const examples: SftExample[] = [];
  for (const conversation of conversations) {
    const rendered =
      'render' in format
        ? format.render(conversation.messages)
        : renderChat(conversation.messages, { tokenizer: format });
    let tokens = rendered.tokens;
    let mask = rendered.assistantMask;
    if (tokens.length > maxSeqLen) {
      truncated++;
      tokens = tokens.slice(0, maxSeqLen);
      mask = mask.slice(0, maxSeqLen);
    }
    if (mask.some((m) => m === 1)) examples.push({ tokens, mask });
  }
  return { examples, truncated };
}

/** Mean assistant-token NLL of examples under the policy. */
export async function heldOutLoss(
  policy: Pick<TrainablePolicy, 'logprobs'>,
  examples: readonly SftExample[],
  batchSize: number,
): Promise<number> {
  let total = 0;
  let count = 0;
  for (let start = 0; start < examples.length; start += batchSize) {
    const batch = examples.slice(start, start + batchSize);
    const logprobs = await policy.logprobs({ sequences: batch.map((e) => e.tokens) });
    batch.forEach((example, i) => {
      const scored = at(logprobs, i, 'scored sequences');
      example.mask.forEach((m, t) => {
        if (m === 1 && t > 0) {
          total -= at(scored, t, 'token log-probs');
          count++;
        }
      });
    });
  }
  return count === 0 ? NaN : total / count;
}

export async function runSft(options: {
  policy: TrainablePolicy;
  train: readonly SftExample[];
  heldOut?: readonly SftExample[];
  config?: SftConfigInput;
  onProgress?: (progress: SftProgress) => void;
  /** Checked between steps; when it returns true, training stops after the current step. */
  shouldStop?: () => boolean;
}): Promise<SftResult> {
  const config = sftConfigSchema.parse(options.config ?? {});
  const { policy, train } = options;
  if (train.length === 0)
    throw new InvalidArgumentError('SFT needs at least one training conversation with an assistant turn');
  requireCapabilities(policy, { what: 'SFT', maxGradNorm: config.maxGradNorm });
  const rng = new Rng(config.seed);
  let order: number[] = [];
  const nextBatch = (): SftExample[] => {
    const batch: SftExample[] = [];
    while (batch.length < config.batchSize) {
      if (order.length === 0) order = rng.shuffle(train.map((_, i) => i));
      const index = order.pop();
      if (index !== undefined) batch.push(at(train, index, 'training examples'));
    }
    return batch;
  };
  const history: SftProgress[] = [];
  const started = performance.now();
  let tokensSeen = 0;
  let last: SftProgress | undefined;
  let lastHeldOut: number | undefined;
  for (let step = 1; step <= config.steps; step++) {
    const batch = nextBatch();
    const learningRate = learningRateAt(step, {
      peak: config.learningRate,
      totalSteps: config.steps,
      warmupSteps: config.warmupSteps,
      minRatio: config.minLearningRateRatio,
    });
    const report = await policyStep(
      policy,
      { sequences: batch.map((e) => e.tokens) },
      sftLoss(batch.map((e) => e.mask)),
      {
        learningRate,
        maxGradNorm: config.maxGradNorm,
        weightDecay: config.weightDecay,
      },
    );
    tokensSeen += batch.reduce((n, e) => n + e.tokens.length, 0);
    const isEval =
      options.heldOut !== undefined &&
      options.heldOut.length > 0 &&
      (step % config.evalEvery === 0 || step === config.steps);
    if (isEval) lastHeldOut = await heldOutLoss(policy, options.heldOut!, config.batchSize);
    last = {
      step,
      totalSteps: config.steps,
      loss: report.loss,
      learningRate,
      gradNorm: report.gradNorm,
      heldOutLoss: lastHeldOut,
      tokensPerSecond: tokensSeen / ((performance.now() - started) / 1000),
    };
    history.push(last);
    options.onProgress?.(last);
    if (options.shouldStop?.()) break;
  }
  return { finalLoss: last?.loss ?? NaN, heldOutLoss: lastHeldOut, truncated: 0, history };
}
