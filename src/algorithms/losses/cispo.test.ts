import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { at } from '../../core/indexing.ts';
import { offPolicyReference as reference } from '../fixtures/off-policy-reference.ts';
import { assertAllClose, assertClose } from '../gradient-check.ts';
import { rlLoss } from '../rl-loss.ts';
import { cispoLoss } from './cispo.ts';
import { ppoClipLoss } from './ppo-clip.ts';

describe('cispoLoss', () => {
  it('matches hand-computed values: the ratio is clipped, the gradient never vanishes', () => {
    // old = 0, logp = log r; ε_low 0.2, ε_high 0.2 → r̂ ∈ [0.8, 1.2].
    //  A= 1, r=1.5: r̂ 1.2, ℓ = −1.2·log 1.5, dℓ = −1.2
    //  A=−1, r=0.5: r̂ 0.8, ℓ = 0.8·log 0.5,  dℓ = 0.8
    //  A= 2, r=1.1: r̂ 1.1, ℓ = −2.2·log 1.1, dℓ = −2.2
    const ratios = [1.5, 0.5, 1.1];
    const { loss, gradLogprobs, tokenLosses, metrics } = cispoLoss({
      logprobs: [ratios.map(Math.log)],
      oldLogprobs: [[0, 0, 0]],
      advantages: [[1, -1, 2]],
      lossMask: [[1, 1, 1]],
      clipRatioLow: 0.2,
      clipRatioHigh: 0.2,
    });
    const expected = [-1.2 * Math.log(1.5), 0.8 * Math.log(0.5), -2.2 * Math.log(1.1)];
    assertAllClose(at(tokenLosses, 0), expected);
    assertClose(loss, expected.reduce((a, b) => a + b, 0) / 3);
    assertAllClose(at(gradLogprobs, 0), [-1.2 / 3, 0.8 / 3, -2.2 / 3]);
    assertClose(metrics.clipfrac, 2 / 3);
  });

  it('where PPO-clip zeroes a token (ratio 10, A > 0), CISPO keeps its gradient at the clipped weight', () => {
    const options = { logprobs: [[Math.log(10)]], oldLogprobs: [[0]], advantages: [[1]], lossMask: [[1]] };
    assert.equal(at(ppoClipLoss(options).gradLogprobs, 0)[0], 0);
    assertClose(at(at(cispoLoss(options).gradLogprobs, 0), 0), -5, 1e-12, 'defaults ε_low 1, ε_high 4: r̂ = 5');
  });

  it('skips masked tokens and clamps the log ratio at ±20', () => {
    const { loss, gradLogprobs } = cispoLoss({
      logprobs: [[-100, 30]],
      oldLogprobs: [[0, 0]],
      advantages: [[9, -1]],
      lossMask: [[0, 1]],
      clipRatioHigh: 1e12,
    });
    assertClose(loss, Math.exp(20) * 30);
    assertAllClose(at(gradLogprobs, 0), [0, Math.exp(20)]);
  });
});

describe('cispoLoss against the PyTorch reference (autograd through sg(clip(r))·A·logp)', () => {
  const { inputs } = reference;
  for (const case_ of reference.cispo) {
    it(`ε_low ${case_.clipRatioLow}, ε_high ${case_.clipRatioHigh}, ${case_.lossAggMode}`, () => {
      const result = cispoLoss({
        logprobs: inputs.currentLogprobs,
        oldLogprobs: inputs.behaviourLogprobs,
        advantages: inputs.advantages,
        lossMask: inputs.lossMask,
        clipRatioLow: case_.clipRatioLow,
        clipRatioHigh: case_.clipRatioHigh,
        lossAggMode: case_.lossAggMode,
        lossScaleFactor: case_.lossScaleFactor,
      });
      assertClose(result.loss, case_.loss, 1e-12, 'loss');
      for (const [i, row] of case_.gradLogprobs.entries())
        assertAllClose(at(result.gradLogprobs, i), row, 1e-12, `grad[${i}]`);
      assertClose(result.metrics.clipfrac, case_.clipfrac, 1e-12, 'clipfrac');
    });
  }

  it('through rlLoss as a TokenLoss named cispo (float32 log-probs in and out)', () => {
    const case_ = reference.cispo.find((c) => c.clipRatioLow === 0.2 && c.lossAggMode === 'token-mean');
    assert.ok(case_);
    const tokenLoss = rlLoss({
      oldLogprobs: inputs.behaviourLogprobs,
      advantages: inputs.advantages,
      lossMask: inputs.lossMask,
      config: { policyLoss: 'cispo', clipRatioLow: 0.2, clipRatioHigh: 0.28 },
    });
    assert.equal(tokenLoss.name, 'cispo');
    assert.equal(tokenLoss.dependsOnCurrent, true);
    const output = tokenLoss.compute({ logprobs: inputs.currentLogprobs.map((row) => Float32Array.from(row)) });
    assertClose(output.loss, case_.loss, 1e-5);
    for (const [i, row] of case_.gradLogprobs.entries())
      assertAllClose(at(output.gradLogprobs, i), row, 1e-6, `grad[${i}]`);
  });
});
