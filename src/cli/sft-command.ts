/**
 * `agentrl sft --data file.jsonl [--model <model>]`: supervised fine-tuning of the built-in model on
 * OpenAI-format chat JSONL, with a progress bar, held-out loss and a checkpoint at the end (also on
 * Ctrl-C). From a fresh byte model by default; `--model` (alias `--init`) starts from any model
 * source (model/model-sources.ts: a checkpoint or Hugging Face folder, a .gguf file, a pulled
 * model's name), and a model with its own chat format is trained in it — the conversations are
 * rendered by its template and the checkpoint carries its tokenizer files.
 *
 * `--backend tinker --base-url … --base-model … [--tokenizer …]` trains a LoRA on a Tinker server
 * instead (train's flags and refusals, backend-setup.ts; the backend preset turns clipping off):
 * the context window is `--max-seq-len`, and `--out` gets the server checkpoint's record.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { agentrlChatFormat } from '../chat/chat-format.ts';
import { modelConfigSchema } from '../model/config.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { loadModelCheckpoint } from '../model/model-sources.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { TinkerPolicy } from '../policy/tinker/index.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { readChatJsonl, splitHeldOut } from '../train/chat-data.ts';
import { renderExamples, runSft, sftConfigSchema } from '../train/sft.ts';
import { Progress } from './progress.ts';
import { parseFlags, rejectPositional, validateFlags } from './flags.ts';
import { gracefulInterrupt } from './interrupt.ts';
import { checkModelTokenizer, defaultTrainModel, modelSpecOf } from './model-setup.ts';
import { backendPreset, backendSchema, checkBackendOptions, tinkerPolicyOptions } from './backend-setup.ts';
import { checkPresetOptions, pretrainedPreset } from './model-presets.ts';

export const sftCommandSchema = z.object({
  data: z.string().describe('chat JSONL file (OpenAI messages format)'),
  out: z.string().default('checkpoints/sft').describe('checkpoint folder written at the end'),
  model: z
    .string()
    .optional()
    .describe(
      'start from this model instead of a fresh one: a checkpoint or Hugging Face folder, a .gguf file or a pulled model (agentrl models list); a model with its own chat template is trained in it',
    ),
  init: z.string().optional().describe('alias of --model (its older name; pass one of them)'),
  heldOutFraction: z.number().min(0).max(0.9).default(0.1).describe('fraction of conversations held out'),
  ...sftConfigSchema.shape,
  ...modelConfigSchema.partial().shape,
  ...backendSchema.shape,
});
type SftCommandOptions = z.infer<typeof sftCommandSchema>;

/** The policy SFT trains: `--model`'s weights in its own chat format (checked like train's), else a fresh byte model of the flags' size. */
async function startingPolicy(options: SftCommandOptions): Promise<TrainablePolicy> {
  if (options.backend === 'tinker') return TinkerPolicy.create(tinkerPolicyOptions(options));
  const spec = modelSpecOf(options);
  if (spec !== undefined) {
    const checkpoint = await loadModelCheckpoint(spec);
    checkModelTokenizer(spec, checkpoint);
    return new BuiltinPolicy({
      model: await TransformerModel.fromParams(checkpoint.config, checkpoint.params),
      tokenizer: checkpoint.tokenizer,
      chatFormat: checkpoint.chatFormat,
    });
  }
  const modelConfig = Object.fromEntries(
    Object.keys(modelConfigSchema.shape).flatMap((k) =>
      k in options && (options as Record<string, unknown>)[k] !== undefined
        ? [[k, (options as Record<string, unknown>)[k]]]
        : [],
    ),
  );
  return new BuiltinPolicy({ model: await TransformerModel.create(modelConfig, { seed: options.seed }) });
}

export async function sftCommand(argv: readonly string[]): Promise<number> {
  const { values, positional } = parseFlags(sftCommandSchema, argv);
  rejectPositional(sftCommandSchema, positional);
  // A pretrained model's preset (model-presets.ts): its LoRA learning rate and, on tinker, its context.
  const plain = validateFlags(sftCommandSchema, { ...backendPreset(values.backend), ...values });
  const preset = Object.fromEntries(
    Object.entries(pretrainedPreset(plain)).filter(([key]) => key in sftCommandSchema.shape),
  );
  const options = validateFlags(sftCommandSchema, { ...backendPreset(values.backend), ...preset, ...values });
  // SFT trains no critic and no entropy bonus: only the backend's own refusals apply, before any work.
  checkBackendOptions({ ...options, algo: 'grpo', entropyCoef: 0 });
  checkPresetOptions(options, {
    ...Object.fromEntries(Object.keys(preset).map((key) => [key, 'the pretrained-model preset'])),
    ...Object.fromEntries(Object.keys(values).map((key) => [key, 'the command line'])),
  });
  const builtinLoraFlag = (['loraRank', 'loraAlpha', 'loraDropout', 'loraTargets'] as const).find(
    (flag) => options[flag] !== undefined,
  );
  if (options.backend === 'builtin' && builtinLoraFlag !== undefined)
    throw new InvalidArgumentError(
      `agentrl sft trains every weight of the built-in model; --${builtinLoraFlag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is for --backend tinker`,
      { flag: builtinLoraFlag },
    );
  const conversations = await readChatJsonl(options.data);
  const policy = await startingPolicy(options);
  try {
    return await trainAndSave(policy, options, conversations);
  } finally {
    if (policy instanceof TinkerPolicy) await policy.close();
  }
}

async function trainAndSave(
  policy: TrainablePolicy,
  options: SftCommandOptions,
  conversations: Awaited<ReturnType<typeof readChatJsonl>>,
): Promise<number> {
  const window = Number.isFinite(policy.contextWindow)
    ? policy.contextWindow
    : (options.maxSeqLen ?? defaultTrainModel.maxSeqLen);
  const { train, heldOut } = splitHeldOut(conversations, {
    heldOutFraction: options.heldOutFraction,
    seed: options.seed,
  });
  const format = policy.chatFormat ?? agentrlChatFormat(policy.tokenizer);
  const trainSet = renderExamples(train, format, window);
  const heldOutSet = renderExamples(heldOut, format, window);
  const truncated = trainSet.truncated + heldOutSet.truncated;
  console.error(
    `sft: ${trainSet.examples.length} training / ${heldOutSet.examples.length} held-out conversations in the ${format.name} chat format` +
      (truncated > 0 ? ` (${truncated} cut at the ${window}-token window)` : ''),
  );
  const interrupt = gracefulInterrupt('sft', 'stopping after this step and saving the checkpoint');
  const progress = new Progress({ label: 'sft', total: options.steps });
  const result = await runSft({
    policy,
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
  await policy.save(options.out, {
    metadata: {
      kind: 'sft',
      step: policy instanceof BuiltinPolicy ? policy.model.step : (result.history.at(-1)?.step ?? 0),
      trainLoss: result.finalLoss,
      heldOutLoss: result.heldOutLoss ?? null,
    },
  });
  console.log(
    `sft: done — train loss ${result.finalLoss.toFixed(4)}` +
      (result.heldOutLoss !== undefined ? `, held-out loss ${result.heldOutLoss.toFixed(4)}` : '') +
      `; checkpoint in ${options.out}`,
  );
  // Stopped by Ctrl-C / SIGTERM (the checkpoint above holds the steps done): 130 / 143.
  return interrupt.exitCode();
}
