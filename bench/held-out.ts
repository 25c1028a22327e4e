/**
 * Held-out success of a saved checkpoint, in its own process: the figure depends only on the
 * saved weights (what a user's later `serve-policy` or evaluation loads), not on the trainer's
 * state. Used by bench:learning.
 *
 *   node --import tsx bench/held-out.ts <checkpoint> <env> '<env options JSON>' '<rl config JSON>'
 * prints {"sampled": x, "greedy": y}.
 */
import { getEnvironment } from '../src/envs/index.ts';
import { loadCheckpoint } from '../src/model/checkpoint.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { heldOutSuccess, rlConfigSchema } from '../src/train/rl.ts';

const [dir, envName, envOptions, rlConfig] = process.argv.slice(2);
if (dir === undefined || envName === undefined)
  throw new Error('usage: held-out.ts <checkpoint> <env> [env options JSON] [rl config JSON]');
const checkpoint = await loadCheckpoint(dir);
const model = await TransformerModel.fromParams(checkpoint.config, checkpoint.params);
const descriptor = getEnvironment(envName);
const options = JSON.parse(envOptions ?? '{}') as Record<string, unknown>;
const config = rlConfigSchema.parse(JSON.parse(rlConfig ?? '{}'));
const samples = Number(process.env.BENCH_SAMPLES ?? 2);
console.log(
  JSON.stringify(
    await heldOutSuccess(new BuiltinPolicy({ model }), () => descriptor.make(options), config, { samples }),
  ),
);
