/**
 * bench:engine's SmolLM2-135M tables (real weights from the pulled GGUF, and random weights of its
 * shape): generation, agentrl vs llama.cpp (node-llama-cpp, the same GGUF); scoring, agentrl vs
 * PyTorch + transformers; the LoRA PPO step, agentrl vs PyTorch + transformers + PEFT. Every
 * system at every thread setting in its own child; the best setting of each is compared.
 */
import { statSync } from 'node:fs';
import type { BenchSettings, SectionName } from './engine-settings.ts';
import { smolShape, type WeightKind } from './engine-workload.ts';
import type { BaseQuantization } from '../src/model/model-options.ts';
import { runBaselineChild, runNodeChild, runPythonChild, torchPython, type Measurement } from './engine-spawn.ts';
import { bestOf, fixed, megabytes, printTable, ratioTarget, type TargetCheck } from './engine-report.ts';
import { exportFolder, realGgufPath } from './engine-weights.ts';
import { stepPrompt, loraStep } from './engine-train.ts';
import {
  decodeStepWork,
  fractionText,
  matmulParameters,
  scoringWork,
  trainStepWork,
  type DecoderShape,
  type Roofline,
} from './roofline-bounds.ts';

const shape: DecoderShape = {
  vocab: smolShape.vocab,
  hidden: smolShape.hidden,
  layers: smolShape.layers,
  heads: smolShape.heads,
  kvHeads: smolShape.kv_heads,
  intermediate: smolShape.intermediate,
};

/** Today's agentrl tok/s on the real weights, 2 threads, quiet machine (notes/tensor-library.md, 2026-12-03). */
export const generationBaseline: Record<number, number> = { 1: 15.5, 16: 104.6, 64: 66.8 };

type Tagged = Measurement & { weights: WeightKind };
const present = (measurement: Tagged | null): measurement is Tagged => measurement !== null;
const tagged = (measurement: Measurement | null, weights: WeightKind): Tagged | null =>
  measurement === null ? null : { ...measurement, weights };
const ofWeights = (all: readonly Tagged[], weights: WeightKind) => all.filter((m) => m.weights === weights);

function generationTable(
  settings: BenchSettings,
  {
    ours,
    quantized,
    before,
    llama,
    ggufBytes,
  }: { ours: Tagged[]; quantized: Quantized[]; before: Tagged[]; llama: Tagged[]; ggufBytes: number },
  roofline: Roofline | null,
): void {
  const batches = settings.genBatches;
  printTable(
    ['system', 'weights', 'threads', ...batches.map((b) => `batch ${b} (tok/s)`), 'peak RSS (MB)', 'notes'],
    [...ours, ...before, ...llama].map((m) => [
      m.system,
      m.weights,
      m.threads,
      ...batches.map((b) => fixed(m.figures[`gen.b${b}`], 1)),
      megabytes(m.peakRssMb),
      m.note ?? '',
    ]),
  );
  if (roofline === null) return;
  const context = settings.genPrompt + settings.genNew / 2;
  const rows = [
    ...settings.weights.map((weights) => ({
      label: `agentrl (${weights})`,
      runs: ofWeights(ours, weights).filter((m) => !quantized.some((q) => q.run === m)),
      bytes: 4,
      cached: 4,
    })),
    // int8 blocks of 32: 32 one-byte weights, a float32 scale and a one-byte zero point (matmul-nbits.ts).
    ...(settings.genBases.includes('int8')
      ? [
          {
            label: 'agentrl (real, int8 base)',
            runs: quantizedOf(quantized, 'int8'),
            bytes: 37 / 32,
            cached: 4,
          },
        ]
      : []),
    { label: 'llama.cpp (real)', runs: llama, bytes: ggufBytes, cached: 2 },
  ].filter((row) => row.runs.length > 0);
  printTable(
    ['best setting', 'weight bytes/param', ...batches.map((b) => `batch ${b}: of roofline`)],
    rows.map((row) => [
      row.label,
      row.bytes.toFixed(2),
      ...batches.map((batch) => {
        const rate = bestOf(row.runs, `gen.b${batch}`, 'higher')?.value ?? NaN;
        const work = decodeStepWork(shape, { batch, context, bytesPerWeight: row.bytes, bytesPerCached: row.cached });
        return fractionText(work, batch / rate, roofline);
      }),
    ]),
  );
}

/** The GGUF's bytes per matmul weight (its file size over the weights each token reads). */
function ggufBytesPerWeight(path: string | null): number {
  return path === null ? 0.625 : statSync(path).size / matmulParameters(shape); // Q4_1: 20 bytes per 32 weights
}

function generationTargets(settings: BenchSettings, ours: Tagged[], llama: Tagged[], before: Tagged[]): TargetCheck[] {
  const real = ofWeights(ours, 'real');
  const rate = (runs: Tagged[], batch: number) => bestOf(runs, `gen.b${batch}`, 'higher')?.value;
  const checks = settings.genBatches.map((batch) =>
    ratioTarget(
      `generation batch ${batch}: agentrl / llama.cpp tok/s (real weights)`,
      rate(real, batch),
      rate(llama, batch),
      '≥',
      1,
    ),
  );
  for (const batch of settings.genBatches.filter((b) => b > 1)) {
    const measured = rate(before, batch);
    const today = measured ?? generationBaseline[batch];
    if (today === undefined) continue;
    const source = measured === undefined ? "the notes' (another machine)" : 'measured in this run';
    checks.push(
      ratioTarget(
        `generation batch ${batch}: agentrl / today's ${today.toFixed(1)} tok/s (${source})`,
        rate(real, batch),
        today,
        '≥',
        3,
      ),
    );
  }
  const sorted = [...settings.genBatches].sort((a, b) => a - b);
  for (let i = 1; i < sorted.length; i++) {
    const [small, large] = [sorted[i - 1] ?? 1, sorted[i] ?? 1];
    checks.push(
      ratioTarget(
        `throughput grows with the batch: agentrl batch ${large} / batch ${small} tok/s`,
        rate(real, large),
        rate(real, small),
        '≥',
        1,
      ),
    );
  }
  return checks;
}

function torchRuns(
  settings: BenchSettings,
  script: string,
  args: Record<string, unknown>,
  realDir: string | null,
): Tagged[] {
  const python = settings.python === '1' ? torchPython() : null;
  if (python === null) return [];
  return settings.weights
    .flatMap((weights) =>
      weights === 'real' && realDir === null
        ? []
        : settings.threads.map((threads) =>
            tagged(
              runPythonChild(
                python,
                script,
                { ...args, shape: smolShape, weights, weights_dir: weights === 'real' ? realDir : null },
                { threads },
              ),
              weights,
            ),
          ),
    )
    .filter(present);
}

function timeTable(
  title: string,
  figure: string,
  all: Tagged[],
  work: Parameters<typeof fractionText>[0],
  roofline: Roofline | null,
): void {
  printTable(
    ['system', 'weights', 'threads', `${title} (s)`, 'of roofline', 'peak RSS (MB)', 'notes'],
    all.map((m) => [
      m.system,
      m.weights,
      m.threads,
      fixed(m.figures[figure], 2),
      fractionText(work, m.figures[figure] ?? NaN, roofline),
      megabytes(m.peakRssMb),
      m.note ?? '',
    ]),
  );
}

function timeTargets(
  label: string,
  figure: string,
  ours: Tagged[],
  peers: Tagged[],
  weightKinds: readonly WeightKind[],
): TargetCheck[] {
  return weightKinds.map((weights) =>
    ratioTarget(
      `${label}: agentrl / PyTorch time (${weights} weights)`,
      bestOf(ofWeights(ours, weights), figure, 'lower')?.value,
      bestOf(ofWeights(peers, weights), figure, 'lower')?.value,
      '≤',
      1,
    ),
  );
}

const leastRss = (runs: Tagged[]): number | undefined =>
  runs.length === 0 ? undefined : Math.min(...runs.map((m) => m.peakRssMb));

/** Today's engine (a checkout before issue 28, BENCH_BASELINE_DIR) generating on the real weights. */
function baselineRuns(settings: BenchSettings, gguf: string | null): Tagged[] {
  if (settings.baselineDir === '' || gguf === null) return [];
  const args = { ...settings, weights: 'real', generate: true, score: false };
  return settings.threads
    .map((threads) => tagged(runBaselineChild(settings.baselineDir, 'inference', args, threads), 'real'))
    .filter(present)
    .map((m) => ({ ...m, system: `agentrl before issue 28 (${settings.baselineDir})` }));
}

/** Every agentrl system at every weights kind × thread setting: one child each. */
function ourRuns(settings: BenchSettings, kind: string, args: Record<string, unknown>): Tagged[] {
  return settings.weights
    .flatMap((weights) =>
      settings.threads.map((threads) => tagged(runNodeChild(kind, { ...args, weights }, threads), weights)),
    )
    .filter(present);
}

/** A run of agentrl's generation with its base quantized, and how. */
interface Quantized {
  base: BaseQuantization;
  run: Tagged;
}
/** The real-weight runs of one quantized base. */
const quantizedOf = (all: readonly Quantized[], base: BaseQuantization): Tagged[] =>
  ofWeights(
    all.filter((q) => q.base === base).map((q) => q.run),
    'real',
  );

/** agentrl's generation with the base quantized (BENCH_GEN_BASES other than float32): one child per base × weights × threads. */
function quantizedRuns(settings: BenchSettings): Quantized[] {
  const bases = settings.genBases.filter((base) => base !== 'float32');
  return bases.flatMap((base) =>
    ourRuns(settings, 'inference', { ...settings, generate: true, score: false, baseQuantization: base }).map(
      (run) => ({ base, run }),
    ),
  );
}

/** llama.cpp against agentrl with a quantized base: a row per base and batch (the float32 targets are generationTargets'). */
function quantizedTargets(settings: BenchSettings, quantized: Quantized[], llama: Tagged[]): TargetCheck[] {
  const rate = (runs: Tagged[], batch: number) => bestOf(runs, `gen.b${batch}`, 'higher')?.value;
  return settings.genBases
    .filter((base) => base !== 'float32')
    .flatMap((base) => {
      const runs = quantizedOf(quantized, base);
      return settings.genBatches.map((batch) =>
        ratioTarget(
          `generation batch ${batch}: agentrl (${base} base) / llama.cpp tok/s (real weights)`,
          rate(runs, batch),
          rate(llama, batch),
          '≥',
          1,
        ),
      );
    });
}

function benchGeneration(settings: BenchSettings, inference: Tagged[], gguf: string | null, roofline: Roofline | null) {
  console.log(
    `\n## SmolLM2-135M generation: ${settings.genPrompt}-token prompts, ${settings.genNew} new tokens, temperature 1, per-token log-probs`,
  );
  const llamaArgs = { ...settings, vocab: smolShape.vocab };
  const llama =
    gguf === null
      ? []
      : settings.threads.map((threads) => tagged(runNodeChild('llama', llamaArgs, threads), 'real')).filter(present);
  const before = baselineRuns(settings, gguf);
  const quantized = quantizedRuns(settings);
  const ours = [...inference, ...quantized.map((q) => q.run)];
  generationTable(settings, { ours, quantized, before, llama, ggufBytes: ggufBytesPerWeight(gguf) }, roofline);
  return [...generationTargets(settings, inference, llama, before), ...quantizedTargets(settings, quantized, llama)];
}

function benchScoring(settings: BenchSettings, inference: Tagged[], realDir: string | null, roofline: Roofline | null) {
  const { scoreRows: rows, scoreLength: length } = settings;
  console.log(`\n## SmolLM2-135M scoring ${rows} × ${length} tokens (per-token log-probs)`);
  const peers = torchRuns(settings, 'engine_score_torch.py', { rows, length, reps: settings.reps }, realDir);
  timeTable('scoring', 'scoreSeconds', [...inference, ...peers], scoringWork(shape, rows, length), roofline);
  return timeTargets(`scoring ${rows} × ${length}`, 'scoreSeconds', inference, peers, settings.weights);
}

function benchStep(settings: BenchSettings, realDir: string | null, roofline: Roofline | null) {
  const { stepRows: rows, stepLength: length, reps } = settings;
  const { rank, alpha } = loraStep;
  console.log(
    `\n## SmolLM2-135M LoRA PPO step ${rows} × ${length} tokens, rank ${rank} on ${loraStep.targetModules.length} projections`,
  );
  const ours = ourRuns(settings, 'step', {
    model: settings.model,
    rows,
    length,
    reps,
    trainTokens: settings.stepTrainTokens,
  });
  const args = { rows, length, prompt: stepPrompt(length), rank, alpha, reps };
  const peers = torchRuns(settings, 'engine_train_torch.py', args, realDir);
  const work = trainStepWork(shape, rows, length, 2);
  timeTable('LoRA PPO step', 'stepSeconds', [...ours, ...peers], work, roofline);
  return [
    ...timeTargets('LoRA PPO step', 'stepSeconds', ours, peers, settings.weights),
    ratioTarget('LoRA PPO step peak RSS: agentrl / PyTorch (least of each)', leastRss(ours), leastRss(peers), '≤', 1),
  ];
}

/** The real model's GGUF; null (said on stderr: the real-weight rows are left out) when it is not there. */
async function pulledGguf(settings: BenchSettings): Promise<string | null> {
  try {
    return await realGgufPath(settings.model);
  } catch (error) {
    console.error(`real weights left out: ${(error as Error).message}`);
    return null;
  }
}

/** Generation, scoring and the LoRA step on SmolLM2's shape; returns their targets. */
export async function benchSmol(requested: BenchSettings, roofline: Roofline | null): Promise<TargetCheck[]> {
  const on = (section: SectionName) => requested.sections.includes(section);
  const gguf = requested.weights.includes('real') ? await pulledGguf(requested) : null;
  const settings =
    gguf === null ? { ...requested, weights: requested.weights.filter((kind) => kind !== 'real') } : requested;
  const needsExport = settings.python === '1' && gguf !== null && (on('scoring') || on('step'));
  const folder = needsExport ? exportFolder() : null;
  try {
    const exported = folder !== null && runNodeChild('export', { model: settings.model, dir: folder.dir }, 1) !== null;
    const realDir = exported ? (folder?.dir ?? null) : null;
    const inference =
      on('generation') || on('scoring')
        ? ourRuns(settings, 'inference', { ...settings, generate: on('generation'), score: on('scoring') })
        : [];
    return [
      ...(on('generation') ? benchGeneration(settings, inference, gguf, roofline) : []),
      ...(on('scoring') ? benchScoring(settings, inference, realDir, roofline) : []),
      ...(on('step') ? benchStep(settings, realDir, roofline) : []),
    ];
  } finally {
    folder?.remove();
  }
}
