/**
 * `policyContract` (src/policy/contract.ts) for `TinkerPolicy` against the real server run.sh
 * started — the suite every trainable backend runs, holding Tinker to what its server declares:
 * scoring at temperature 1 only (SkyRL tx returns temperature-1 sampling log-probs), no gradient
 * norm reported, `save` writing a `tinker-checkpoint.json` record instead of a Hugging Face folder.
 * Not named *.test.ts: `npm test` must not collect it (it needs the server).
 *
 *   TINKER_BASE_URL=http://127.0.0.1:8765 TINKER_BASE_MODEL=/path/model node --import tsx --test scripts/check-tinker/contract-check.ts
 */
import { after } from 'node:test';
import { policyContract } from '../../src/policy/contract.ts';
import { TinkerPolicy } from '../../src/policy/tinker/index.ts';

const baseUrl = process.env.TINKER_BASE_URL ?? 'http://127.0.0.1:8765';
const baseModel = process.env.TINKER_BASE_MODEL;
if (baseModel === undefined)
  throw new TypeError('contract-check.ts needs TINKER_BASE_MODEL: the model folder the server serves');

// One LoRA run for every check (the server holds few at once); the training checks run last.
let shared: Promise<TinkerPolicy> | undefined;
const makePolicy = (): Promise<TinkerPolicy> =>
  (shared ??= TinkerPolicy.create({
    baseUrl,
    baseModel,
    rank: 8,
    seed: 3,
    lossReduction: 'sequence-mean',
    contextWindow: 256,
    retry: { timeoutMs: 120_000 },
  }));
after(async () => {
  if (shared !== undefined) await (await shared).close();
});

policyContract('tinker (SkyRL tx)', makePolicy, {
  trainable: true,
  trainableChecks: { scoringTemperature: 1, reportsGradNorm: false, checkpointFiles: ['tinker-checkpoint.json'] },
});
