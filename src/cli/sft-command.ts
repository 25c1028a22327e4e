/**
 * `agentrl sft --data file.jsonl`: supervised fine-tuning of the built-in model on OpenAI-format
 * chat JSONL, with a progress bar, held-out loss and a checkpoint at the end (also on Ctrl-C).
 */
import { z } from 'zod';
import { modelConfigSchema } from '../model/config.ts';
import { TransformerModel } from '../model/model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { readChatJsonl, splitHeldOut } from '../train/chat-data.ts';
import { renderExamples, runSft, sftConfigSchema } from '../train/sft.ts';
import { Progress } from './progress.ts';
import { parseFlags, rejectPositional, validateFlags } from './flags.ts';
import { gracefulInterrupt } from './interrupt.ts';

export const sftCommandSchema = z.object({
  data: z.string().describe('chat JSONL file (OpenAI messages format)'),
  out: z.string().default('checkpoints/sft').describe('checkpoint folder written at the end'),
  init: z.string().optional().describe('start from this checkpoint folder instead of a fresh model'),
  heldOutFraction: z.number().min(0).max(0.9).default(0.1).describe('fraction of conversations held out'),
  ...sftConfigSchema.shape,
  ...modelConfigSchema.partial().shape,
});

export async function sftCommand(argv: readonly string[]): Promise<number> {
  const { values, positional } = parseFlags(sftCommandSchema, argv);
  rejectPositional(sftCommandSchema, positional);
  const options = validateFlags(sftCommandSchema, values);
  const conversations = await readChatJsonl(options.data);
  let model: TransformerModel;
  if (options.init !== undefined) {
    const checkpoint = await loadCheckpoint(options.init);
    model = await TransformerModel.fromParams(checkpoint.config, checkpoint.params);
  } else {
    const modelConfig = Object.fromEntries(
      Object.keys(modelConfigSchema.shape).flatMap((k) =>
        k in options && (options as Record<string, unknown>)[k] !== undefined
          ? [[k, (options as Record<string, unknown>)[k]]]
          : [],
      ),
    );
    model = await TransformerModel.create(modelConfig, { seed: options.seed });
  }
  const { train, heldOut } = splitHeldOut(conversations, {
    heldOutFraction: options.heldOutFraction,
    seed: options.seed,
  });
  const trainSet = renderExamples(train, byteTokenizer, model.config.maxSeqLen);
  const heldOutSet = renderExamples(heldOut, byteTokenizer, model.config.maxSeqLen);
  const truncated = trainSet.truncated + heldOutSet.truncated;
  console.error(
    `sft: ${trainSet.examples.length} training / ${heldOutSet.examples.length} held-out conversations` +
      (truncated > 0 ? ` (${truncated} cut at the ${model.config.maxSeqLen}-token window)` : ''),
  );
  const interrupt = gracefulInterrupt('sft', 'stopping after this step and saving the checkpoint');
  const progress = new Progress({ label: 'sft', total: options.steps });
  const result = await runSft({
    policy: new BuiltinPolicy({ model }),
    train: trainSet.examples,
    heldOut: heldOutSet.examples,
    config: options,
    shouldStop: interrupt.stopRequested,
    onProgress: (p) =>
      progress.update(p.step, {
        loss: p.loss,
        ...(p.heldOutLoss !== undefined ? { 'held-out': p.heldOutLoss } : {}),
        lr: p.learningRate,
        'tok/s': p.tokensPerSecond,
      }),
  });
  progress.done({
    loss: result.finalLoss,
    ...(result.heldOutLoss !== undefined ? { 'held-out': result.heldOutLoss } : {}),
  });
  interrupt.dispose();
  await saveCheckpoint(options.out, {
    config: model.config,
    params: await model.hostParams(),
    extra: { kind: 'sft', step: model.step, trainLoss: result.finalLoss, heldOutLoss: result.heldOutLoss ?? null },
  });
  console.log(
    `sft: done — train loss ${result.finalLoss.toFixed(4)}` +
      (result.heldOutLoss !== undefined ? `, held-out loss ${result.heldOutLoss.toFixed(4)}` : '') +
      `; checkpoint in ${options.out}`,
  );
  // Stopped by Ctrl-C / SIGTERM (the checkpoint above holds the steps done): 130 / 143.
  return interrupt.exitCode();
}
