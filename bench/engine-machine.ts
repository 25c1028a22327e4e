/**
 * bench:engine's first two tables: the roofline of this machine (bench/roofline.ts and
 * bench/roofline_torch.py at every thread setting; the best matmul rate and the best bandwidth
 * are the bounds) and the tiny reference GPT, agentrl vs PyTorch (bench/engine-tiny.ts,
 * bench/engine_torch.py).
 */
import type { BenchSettings } from './engine-settings.ts';
import { tinyGeneration, tinyReference } from './engine-workload.ts';
import { debianTorchPython, runNodeChild, runPythonChild, torchPython, type Measurement } from './engine-spawn.ts';
import { bestOf, fixed, megabytes, printTable, ratioTarget, type TargetCheck } from './engine-report.ts';
import { decodeStepWork, fractionText, trainStepWork, type DecoderShape, type Roofline } from './roofline-bounds.ts';

const present = (measurement: Measurement | null): measurement is Measurement => measurement !== null;

/** Measures and prints the roofline; null when nothing could be measured. */
export function benchRoofline(settings: BenchSettings): Roofline | null {
  console.log(
    `\n## Roofline of this machine (fp32 matmul ${settings.matmulSize}², ${settings.streamMegabytes} MB arrays)`,
  );
  const args = { matmulSize: settings.matmulSize, streamMegabytes: settings.streamMegabytes, reps: settings.reps };
  const python = settings.python === '1' ? torchPython() : null;
  const measurements = [
    ...settings.threads.map((threads) => runNodeChild('roofline', args, threads)),
    ...(python === null
      ? []
      : settings.threads.map((threads) =>
          runPythonChild(
            python,
            'roofline_torch.py',
            { matmul_size: settings.matmulSize, stream_megabytes: settings.streamMegabytes, reps: settings.reps },
            { threads },
          ),
        )),
  ].filter(present);
  printTable(
    ['system', 'threads', 'matmul (GFLOPS)', 'add (GB/s)', 'copy (GB/s)', 'peak RSS (MB)', 'notes'],
    measurements.map((m) => [
      m.system,
      m.threads,
      fixed(m.figures.matmulGflops, 1),
      fixed(m.figures.addGBps, 1),
      fixed(m.figures.copyGBps, 1),
      megabytes(m.peakRssMb),
      m.note ?? '',
    ]),
  );
  const peak = bestOf(measurements, 'matmulGflops', 'higher');
  const add = bestOf(measurements, 'addGBps', 'higher')?.value ?? 0;
  const copy = bestOf(measurements, 'copyGBps', 'higher')?.value ?? 0;
  if (peak === undefined || Math.max(add, copy) <= 0) return null;
  const roofline = { peakGflops: peak.value, bandwidthGBps: Math.max(add, copy) };
  const ort = bestOf(
    measurements.filter((m) => m.system.startsWith('onnxruntime')),
    'matmulGflops',
    'higher',
  );
  console.log(
    `\nRoofline: peak ${roofline.peakGflops.toFixed(1)} GFLOPS (${peak.measurement.system}, ${peak.measurement.threads} threads; onnxruntime's best ${fixed(ort?.value, 1)}), bandwidth ${roofline.bandwidthGBps.toFixed(1)} GB/s; ridge point ${(roofline.peakGflops / roofline.bandwidthGBps).toFixed(1)} FLOP/byte.`,
  );
  return roofline;
}

const tinyShape: DecoderShape = {
  vocab: tinyReference.vocab,
  hidden: tinyReference.hidden,
  layers: tinyReference.layers,
  heads: tinyReference.heads,
  kvHeads: tinyReference.heads,
  intermediate: tinyReference.intermediate,
};

/**
 * PyTorch's speed on a 2-core machine depends on how its threads and BLAS's share the cores
 * (2 × 2 oversubscribe), so the Debian build runs in four settings, the pinned venv's at each
 * thread count; the best figure of each kind is the peer.
 */
function tinyTorchRuns(settings: BenchSettings): Measurement[] {
  if (settings.python === '0') return [];
  const args = {
    ...tinyReference,
    warmup: 3,
    steps: settings.tinySteps,
    gen_batch: tinyGeneration.batch,
    gen_prompt: tinyGeneration.prompt,
    gen_new: tinyGeneration.newTokens,
    gen_reps: settings.tinyGenReps,
  };
  const runs: (Measurement | null)[] = [];
  const debian = debianTorchPython();
  if (debian !== null) {
    for (const [threads, blasThreads] of [
      [1, 2],
      [2, 1],
      [1, 1],
      [2, 2],
    ] as const)
      runs.push(
        runPythonChild(debian, 'engine_torch.py', { ...args, blas_threads: blasThreads }, { threads, blasThreads }),
      );
  }
  const venv = torchPython();
  if (venv !== null)
    for (const threads of settings.threads)
      runs.push(runPythonChild(venv, 'engine_torch.py', { ...args, blas_threads: threads }, { threads }));
  return runs.filter(present);
}

/** The tiny reference GPT: agentrl vs PyTorch; returns its targets. */
export function benchTiny(settings: BenchSettings, roofline: Roofline | null): TargetCheck[] {
  console.log(
    `\n## Tiny reference GPT ${JSON.stringify(tinyReference)}: train step ${tinyReference.batch} × ${tinyReference.context}; generation ${JSON.stringify(tinyGeneration)}`,
  );
  const args = { steps: settings.tinySteps, genReps: settings.tinyGenReps };
  const ours = settings.threads.map((threads) => runNodeChild('tiny', args, threads)).filter(present);
  const peers = tinyTorchRuns(settings);
  const stepWork = trainStepWork(tinyShape, tinyReference.batch, tinyReference.context, 3);
  const context = tinyGeneration.prompt + tinyGeneration.newTokens / 2;
  const genWork = decodeStepWork(tinyShape, {
    batch: tinyGeneration.batch,
    context,
    bytesPerWeight: 4,
    bytesPerCached: 4,
  });
  printTable(
    [
      'system',
      'threads',
      'train step (ms)',
      'of roofline',
      'generation (tok/s)',
      'of roofline',
      'peak RSS (MB)',
      'notes',
    ],
    [...ours, ...peers].map((m) => {
      const step = m.figures.trainStepSeconds ?? NaN;
      const rate = m.figures.genTokensPerSecond ?? NaN;
      return [
        m.system,
        m.threads,
        fixed(step * 1000, 0),
        fractionText(stepWork, step, roofline),
        fixed(rate, 0),
        fractionText(genWork, tinyGeneration.batch / rate, roofline),
        megabytes(m.peakRssMb),
        m.note ?? '',
      ];
    }),
  );
  return [
    ratioTarget(
      'tiny GPT train step: agentrl / PyTorch time (best of each)',
      bestOf(ours, 'trainStepSeconds', 'lower')?.value,
      bestOf(peers, 'trainStepSeconds', 'lower')?.value,
      '≤',
      1,
    ),
    ratioTarget(
      'tiny GPT generation: agentrl / PyTorch tok/s (best of each)',
      bestOf(ours, 'genTokensPerSecond', 'higher')?.value,
      bestOf(peers, 'genTokensPerSecond', 'higher')?.value,
      '≥',
      1,
    ),
  ];
}
