/**
 * The child process of bench:engine: `node --import tsx bench/engine-child.ts <kind> '<json args>'`
 * measures one system and prints its `Measurement` as the last line of stdout. Kinds: roofline,
 * tiny, inference, llama, step, export (writes the real weights as a Hugging Face folder).
 */
import { UnknownNameError } from '../src/core/errors.ts';
import type { Measurement } from './engine-spawn.ts';
import { measureInference, type InferenceArgs } from './engine-inference.ts';
import { measureLlama, type LlamaArgs } from './engine-llama.ts';
import { measureTiny, type TinyArgs } from './engine-tiny.ts';
import { measureStep, type StepArgs } from './engine-train.ts';
import { exportRealWeights } from './engine-weights.ts';
import { measureRoofline, type RooflineArgs } from './roofline.ts';

const kinds: Record<string, (args: never) => Promise<Measurement>> = {
  roofline: (args: RooflineArgs) => measureRoofline(args),
  tiny: (args: TinyArgs) => measureTiny(args),
  inference: (args: InferenceArgs) => measureInference(args),
  llama: (args: LlamaArgs) => measureLlama(args),
  step: (args: StepArgs) => measureStep(args),
  export: async (args: { model: string; dir: string }) => {
    const start = performance.now();
    await exportRealWeights(args.model, args.dir);
    return {
      system: 'export',
      threads: '1',
      figures: { seconds: (performance.now() - start) / 1000 },
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    };
  },
};

const [kind = '', payload = '{}'] = process.argv.slice(2);
try {
  const measure = kinds[kind];
  if (measure === undefined) throw new UnknownNameError('bench:engine child kind', kind, Object.keys(kinds));
  console.log(JSON.stringify(await measure(JSON.parse(payload) as never)));
  process.exit(0);
} catch (error) {
  // One line the parent shows (its stderr's tail): the error's message, then where it came from.
  const { message, stack = '' } = error as Error;
  console.error(`${stack.split('\n').slice(1, 4).join('\n')}\n${message}`);
  process.exit(1);
}
