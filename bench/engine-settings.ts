/**
 * What `npm run bench:engine` measures and how much of it, from environment variables (each one
 * documented and defaulted in `benchSettingsSchema`; bench/engine.ts's header lists them). A smoke
 * run: `BENCH_REPS=1 BENCH_GEN_NEW=8 BENCH_GEN_BATCHES=1,4 BENCH_SCORE_ROWS=2 BENCH_SCORE_LENGTH=64
 * BENCH_STEP_LENGTH=64 BENCH_THREADS=2 npm run bench:engine`.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../src/core/errors.ts';
import { baseQuantizations } from '../src/model/model-options.ts';
import { weightKinds } from './engine-workload.ts';

const numberList = z
  .string()
  .transform((text) => text.split(',').map((part) => Number(part.trim())))
  .refine((values) => values.every((value) => Number.isInteger(value) && value > 0), 'a list of positive integers');
const positive = z.coerce.number().int().positive();

export const sectionNames = ['roofline', 'tiny', 'generation', 'scoring', 'step'] as const;
export type SectionName = (typeof sectionNames)[number];

export const benchSettingsSchema = z.object({
  /** BENCH_SECTIONS: which parts run (roofline, tiny, generation, scoring, step). Default: all. */
  sections: z
    .string()
    .prefault(sectionNames.join(','))
    .transform((text) => text.split(',').map((part) => part.trim()))
    .pipe(z.array(z.enum(sectionNames))),
  /** BENCH_THREADS: the thread counts every system is run at (each in its own child); the best counts. Default 1,2. */
  threads: numberList.prefault('1,2'),
  /** BENCH_REPS: timed repetitions of each figure after one warm-up; the best (fastest) counts. Default 2. */
  reps: positive.default(2),
  /** BENCH_WEIGHTS: SmolLM2's real (pulled GGUF, dequantized) and/or random weights of its shape. Default real,random. */
  weights: z
    .string()
    .prefault(weightKinds.join(','))
    .transform((text) => text.split(',').map((part) => part.trim()))
    .pipe(z.array(z.enum(weightKinds))),
  /** BENCH_MODEL: the real model (a pulled name, a .gguf, or a folder holding one). Default smollm2-135m-instruct. */
  model: z.string().default('smollm2-135m-instruct'),
  /** BENCH_GEN_BATCHES: generation batch sizes (rows sampled together). Default 1,16,64. */
  genBatches: numberList.prefault('1,16,64'),
  /**
   * BENCH_GEN_BASES: how agentrl's generation session holds the base's matmuls, one row each
   * (float32, int8, int4: MatMulNBits, src/engine/onnx/matmul-nbits.ts); the targets read float32. Default float32,int8.
   */
  genBases: z
    .string()
    .prefault('float32,int8')
    .transform((text) => text.split(',').map((part) => part.trim()))
    .pipe(z.array(z.enum(baseQuantizations))),
  /** BENCH_GEN_PROMPT: prompt tokens per row. Default 32. */
  genPrompt: positive.default(32),
  /** BENCH_GEN_NEW: new tokens per row (EOS does not stop a row). Default 128. */
  genNew: positive.default(128),
  /** BENCH_SCORE_ROWS × BENCH_SCORE_LENGTH: the scoring batch. Default 16 × 256. */
  scoreRows: positive.default(16),
  scoreLength: positive.default(256),
  /** BENCH_STEP_ROWS × BENCH_STEP_LENGTH: the LoRA PPO step's batch (the last 3/4 of each row trained). Default 4 × 256. */
  stepRows: positive.default(4),
  stepLength: positive.default(256),
  /** BENCH_STEP_TRAIN_TOKENS: agentrl's padded tokens per training run in the step (0: the model's own, micro-batches.ts). Default 0. */
  stepTrainTokens: z.coerce.number().int().min(0).default(0),
  /** BENCH_TINY_STEPS: timed train steps of the tiny reference GPT (after 3 warm-up steps). Default 12. */
  tinySteps: positive.default(12),
  /** BENCH_TINY_GEN_REPS: timed generations of the tiny reference GPT. Default 5. */
  tinyGenReps: positive.default(5),
  /** BENCH_MATMUL_N: the roofline's square matmul size. Default 2048. */
  matmulSize: positive.default(2048),
  /** BENCH_STREAM_MB: megabytes per array of the roofline's copy / add (3 arrays should exceed the last-level cache). Default 256. */
  streamMegabytes: positive.default(256),
  /**
   * BENCH_BASELINE_DIR: a checkout of agentrl before issue 28 with its node_modules (e.g. `git worktree add
   * /tmp/agentrl-before 1f45ca8 && cd /tmp/agentrl-before && npm ci`): its generation is measured in this run
   * for the "≥ 3× today's" targets. Default '': today's figures from the notes (another machine).
   */
  baselineDir: z.string().default(''),
  /** BENCH_PYTHON: '0' skips the PyTorch peers (no venv needed). Default '1'. */
  python: z.enum(['0', '1']).default('1'),
});
export type BenchSettings = z.output<typeof benchSettingsSchema>;

const environmentNames: Record<keyof BenchSettings, string> = {
  sections: 'BENCH_SECTIONS',
  threads: 'BENCH_THREADS',
  reps: 'BENCH_REPS',
  weights: 'BENCH_WEIGHTS',
  model: 'BENCH_MODEL',
  genBatches: 'BENCH_GEN_BATCHES',
  genBases: 'BENCH_GEN_BASES',
  genPrompt: 'BENCH_GEN_PROMPT',
  genNew: 'BENCH_GEN_NEW',
  scoreRows: 'BENCH_SCORE_ROWS',
  scoreLength: 'BENCH_SCORE_LENGTH',
  stepRows: 'BENCH_STEP_ROWS',
  stepLength: 'BENCH_STEP_LENGTH',
  stepTrainTokens: 'BENCH_STEP_TRAIN_TOKENS',
  tinySteps: 'BENCH_TINY_STEPS',
  tinyGenReps: 'BENCH_TINY_GEN_REPS',
  matmulSize: 'BENCH_MATMUL_N',
  streamMegabytes: 'BENCH_STREAM_MB',
  baselineDir: 'BENCH_BASELINE_DIR',
  python: 'BENCH_PYTHON',
};

/** The settings from `environment`; a bad value is an error naming the variable and what it accepts. */
export function benchSettings(environment: NodeJS.ProcessEnv = process.env): BenchSettings {
  const raw: Record<string, string> = {};
  for (const [key, name] of Object.entries(environmentNames)) {
    const value = environment[name];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = benchSettingsSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const key = String(issue.path[0]) as keyof BenchSettings;
    return `${environmentNames[key] ?? key}: ${issue.message}`;
  });
  throw new InvalidArgumentError(`bench:engine settings: ${problems.join('; ')}`, { issues: parsed.error.issues });
}
