import assert from 'node:assert/strict';
import { test } from 'node:test';
import { at } from '../core/indexing.ts';
import { rlLoss } from './rl-loss.ts';

const batch = {
  oldLogprobs: [
    [0, -1, -2, -0.5],
    [0, -0.25, -0.75, 0],
  ],
  advantages: [
    [0, 2, 2, 2],
    [0, -1, -1, 0],
  ],
  lossMask: [
    [0, 1, 1, 1],
    [0, 1, 1, 0],
  ],
};

/** Σ_t ℓ_t for the server's ppo / cispo, evaluated at `logprobs` from the spec alone (Tinker's formulas). */
function serverLossValue(spec: NonNullable<ReturnType<typeof rlLoss>['serverLoss']>, logprobs: number[][]): number {
  let total = 0;
  for (const [s, row] of spec.advantages.entries()) {
    for (const [t, advantage] of row.entries()) {
      if (advantage === 0) continue;
      const logp = at(at(logprobs, s), t);
      const ratio = Math.exp(logp - (spec.samplingLogprobs[s]?.[t] ?? 0));
      const clipped = Math.min(Math.max(ratio, spec.clip?.low ?? 0), spec.clip?.high ?? Infinity);
      total +=
        spec.lossFunction === 'ppo' ? -Math.min(ratio * advantage, clipped * advantage) : -clipped * advantage * logp;
    }
  }
  return total;
}

test('cispo and ppo-clip without dual clip carry a serverLoss whose value and gradient are the local loss', () => {
  const logprobs = [
    [0, -0.9, -2.3, -0.1],
    [0, -0.2, -1.5, 0],
  ];
  for (const config of [
    { policyLoss: 'cispo' as const, clipRatioLow: 1, clipRatioHigh: 4 },
    { policyLoss: 'ppo-clip' as const, clipRatioC: null, lossAggMode: 'seq-mean-token-mean' as const },
  ]) {
    const loss = rlLoss({ ...batch, config });
    const spec = loss.serverLoss;
    assert.ok(spec !== undefined, config.policyLoss);
    const local = loss.compute({ logprobs: logprobs.map((row) => Float32Array.from(row)) });
    if (spec.lossFunction === 'ppo') assert.ok(Math.abs(serverLossValue(spec, logprobs) - local.loss) < 1e-6);
    // Finite-difference gradient of the server's form against the local gradient (cispo's value differs by its stop-gradient; its gradient does not).
    const step = 1e-5;
    for (const [s, t] of [
      [0, 1],
      [0, 2],
      [1, 1],
    ] as const) {
      const bumped = logprobs.map((row) => [...row]);
      at(bumped, s)[t] = at(at(bumped, s), t) + step;
      let numeric = (serverLossValue(spec, bumped) - serverLossValue(spec, logprobs)) / step;
      if (spec.lossFunction === 'cispo') {
        const ratio = Math.exp(at(at(logprobs, s), t) - at(at(batch.oldLogprobs, s), t));
        const clipped = Math.min(Math.max(ratio, spec.clip?.low ?? 0), spec.clip?.high ?? Infinity);
        numeric = -clipped * (spec.advantages[s]?.[t] ?? 0);
      }
      assert.ok(Math.abs(numeric - (local.gradLogprobs[s]?.[t] ?? 0)) < 1e-3, `${config.policyLoss} token ${s},${t}`);
    }
  }
});

test('no serverLoss where the server form is not exact: dual clip, GSPO, a KL term, importance weights', () => {
  assert.equal(
    rlLoss({ ...batch, config: { policyLoss: 'ppo-clip' } }).serverLoss,
    undefined,
    'dual clip c = 3 by default',
  );
  assert.equal(rlLoss({ ...batch, config: { policyLoss: 'gspo' } }).serverLoss, undefined);
  assert.equal(
    rlLoss({ ...batch, refLogprobs: batch.oldLogprobs, config: { policyLoss: 'cispo', useKlLoss: true } }).serverLoss,
    undefined,
  );
  assert.equal(
    rlLoss({ ...batch, importanceWeights: batch.lossMask, config: { policyLoss: 'cispo' } }).serverLoss,
    undefined,
  );
});
