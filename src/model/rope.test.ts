import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ropeTables } from './rope.ts';

/** angle = p · θ^(−2i/hd), computed directly. */
function direct(p: number, i: number, hd: number, theta: number): [number, number] {
  const angle = p * theta ** ((-2 * i) / hd);
  return [Math.fround(Math.cos(angle)), Math.fround(Math.sin(angle))];
}

test('rope tables equal the formula for any positions (out of order, repeated, past the cached table, other θ)', () => {
  for (const [hd, theta] of [
    [8, 10_000],
    [8, 500_000],
    [6, 10_000],
  ] as const) {
    for (const positions of [Int32Array.of(3, 0, 3, 1), Int32Array.of(5000, 0, 70, 129), Int32Array.of(2)]) {
      const { cos, sin } = ropeTables(positions, hd, theta);
      assert.equal(cos.length, positions.length * (hd / 2));
      positions.forEach((p, n) => {
        for (let i = 0; i < hd / 2; i++) {
          const [c, s] = direct(p, i, hd, theta);
          assert.equal(cos[n * (hd / 2) + i], c, `cos p=${p} i=${i} hd=${hd} θ=${theta}`);
          assert.equal(sin[n * (hd / 2) + i], s, `sin p=${p} i=${i} hd=${hd} θ=${theta}`);
        }
      });
    }
  }
});

test('a negative or fractional position is refused by value', () => {
  assert.throws(() => ropeTables(Int32Array.of(0, -1), 8, 10_000), /position -1 is not a non-negative integer/);
});
