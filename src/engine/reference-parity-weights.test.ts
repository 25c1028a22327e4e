import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import {
  arrayErrors,
  decodeSamples,
  generatedParams,
  loadReferenceFixture,
  maxAbsError,
} from './reference-parity-fixtures.ts';
import { fixtureFolder } from './reference-parity-cases.ts';
import { bitsChecksum, sampleIndices, uniformArray } from './reference-parity-weights.ts';

const tinyFixture = new URL('tiny-llama-tied.json', fixtureFolder).pathname;

test('uniformArray equals numpy (weights.py) bit for bit, also where the seed and stream wrap mod 2^32', () => {
  // Printed by scripts/reference/engine/weights.py for the same arguments.
  const small = uniformArray(7, 3, 6, { scale: 0.5, offset: 1 });
  assert.deepEqual(
    [...small],
    [
      1.3052077293395996, 0.6869401335716248, 1.0612664222717285, 1.2863860130310059, 1.243602991104126,
      1.1199491024017334,
    ],
  );
  assert.equal(bitsChecksum(small), 4028626893);
  const wrapped = uniformArray(123456789, 4000000000, 1000, { scale: 3.3, offset: -0.1 });
  assert.equal(bitsChecksum(wrapped), 2315696732);
  assert.equal(at(wrapped, 999), -2.4051625728607178);
});

test('uniformArray stays in [offset − scale, offset + scale) and differs between streams', () => {
  const values = uniformArray(1, 1, 10_000, { scale: 0.25, offset: 1 });
  assert.ok(values.every((v) => v >= 0.75 && v < 1.25));
  const other = uniformArray(1, 2, 10_000, { scale: 0.25, offset: 1 });
  assert.ok(values.some((v, i) => v !== other[i]));
});

test('bitsChecksum changes with one flipped bit and with two swapped elements', () => {
  const values = uniformArray(3, 9, 64, { scale: 1, offset: 0 });
  const reference = bitsChecksum(values);
  const flipped = values.slice();
  const bits = new Uint32Array(flipped.buffer);
  bits[17] = at(bits, 17) ^ 1;
  assert.notEqual(bitsChecksum(flipped), reference);
  const swapped = values.slice();
  [swapped[3], swapped[40]] = [at(values, 40), at(values, 3)];
  assert.notEqual(bitsChecksum(swapped), reference);
});

test('sampleIndices keeps a small array whole and 64 + 64 strided elements of a large one, all in range', () => {
  assert.deepEqual(sampleIndices(5), [0, 1, 2, 3, 4]);
  assert.equal(sampleIndices(128).length, 128);
  const large = sampleIndices(49152 * 576);
  assert.equal(large.length, 128);
  assert.deepEqual(large.slice(0, 3), [0, 1, 2]);
  assert.equal(at(large, 64), 64);
  assert.ok(at(large, 127) < 49152 * 576);
  assert.equal(new Set(sampleIndices(200)).size, 128);
});

test('generatedParams rebuilds the recorded weights and refuses ones that differ by a bit', () => {
  const fixture = loadReferenceFixture(tinyFixture);
  const params = generatedParams(fixture.seed, fixture.parameters);
  assert.equal(params.size, fixture.parameters.length);
  const [first, ...rest] = fixture.parameters;
  assert.ok(first !== undefined);
  const tampered = [{ ...first, bitsChecksum: (first.bitsChecksum + 1) >>> 0 }, ...rest];
  assert.throws(() => generatedParams(fixture.seed, tampered), CheckpointError);
  assert.throws(() => generatedParams(fixture.seed + 1, fixture.parameters), /differs from the recorded weights/);
});

test('loadReferenceFixture names the file and the missing field of a broken fixture', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentrl-reference-'));
  const broken = JSON.parse(readFileSync(tinyFixture, 'utf8')) as Record<string, unknown>;
  delete broken.scores;
  const path = join(folder, 'broken.json');
  writeFileSync(path, JSON.stringify(broken));
  assert.throws(
    () => loadReferenceFixture(path),
    (error: unknown) => {
      assert.ok(error instanceof CheckpointError);
      assert.match(error.message, /broken\.json: not a reference fixture.*scores/s);
      return true;
    },
  );
});

test('loadReferenceFixture refuses samples in another encoding than hex (a fixture from before the switch)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentrl-reference-'));
  const fixture = JSON.parse(readFileSync(tinyFixture, 'utf8')) as {
    gradients: { arrays: { samples: string }[] }[];
  };
  const record = fixture.gradients[0]?.arrays[0];
  assert.ok(record !== undefined);
  assert.match(record.samples, /^[0-9a-f]+$/);
  record.samples = Buffer.from(record.samples, 'hex').toString('base64');
  const path = join(folder, 'base64.json');
  writeFileSync(path, JSON.stringify(fixture));
  assert.throws(() => loadReferenceFixture(path), /base64\.json: not a reference fixture.*hex of float32 values/s);
});

test('arrayErrors and maxAbsError: the recorded values score 0, a moved element or token does not', () => {
  const fixture = loadReferenceFixture(tinyFixture);
  const record = fixture.gradients[0]?.arrays.find((a) => a.name === 'layers.1.wv');
  assert.ok(record !== undefined);
  const size = 32 * 16;
  const exact = new Float32Array(size);
  const values = decodeSamples(record.samples);
  sampleIndices(size).forEach((index, k) => {
    exact[index] = at(values, k);
  });
  assert.equal(arrayErrors(exact, record).sampleRelativeError, 0);
  const moved = exact.slice();
  const index = at(sampleIndices(size), 70);
  moved[index] = at(moved, index) + 0.01 * record.norm;
  assert.ok(arrayErrors(moved, record).sampleRelativeError > 1e-3);
  const scores = fixture.scores[0];
  assert.ok(scores !== undefined);
  assert.equal(maxAbsError(scores.logprobs.fp64, scores.logprobs.fp64), 0);
  const shifted = scores.logprobs.fp64.map((row, i) => row.map((v, t) => (i === 1 && t === 2 ? v + 2e-4 : v)));
  assert.ok(Math.abs(maxAbsError(shifted, scores.logprobs.fp64) - 2e-4) < 1e-9);
});
