import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { Progress } from './progress.ts';
import { at } from '../core/indexing.ts';

/** A stream that says it is (or is not) a terminal of `columns` columns and keeps what is written. */
function terminal(isTTY: boolean, columns = 80): { stream: NodeJS.WriteStream; output: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY, columns }) as unknown as NodeJS.WriteStream;
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  return { stream, output: () => chunks.join('') };
}

const manyFields = {
  reward: 0.53125,
  success: 0.5,
  kl: 0.00123,
  entropy: 1.234,
  'gen tok/s': 1234.5,
  'train tok/s': 2345.25,
  val: 0.75,
};
// biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's ANSI escape sequences, which start with ESC (\x1b)
const visible = (line: string) => line.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');

test('progress on an 80-column terminal: every redraw fits the width (so it never wraps and piles up), and shows the phase', async () => {
  const { stream, output } = terminal(true, 80);
  const progress = new Progress({ label: 'rl grpo', total: 100, stream });
  progress.phase('rollout', '3/8');
  progress.update(12, manyFields);
  progress.phase('update');
  progress.phase('validate');
  await new Promise((resolve) => setImmediate(resolve));
  const redraws = output()
    .split('\r')
    .map(visible)
    .filter((line) => line.trim() !== '');
  assert.ok(redraws.length >= 3, output());
  for (const line of redraws)
    assert.ok(
      [...line.replace(/\n$/, '')].length <= 79,
      `fits 80 columns: ${JSON.stringify(line)} (${[...line].length})`,
    );
  assert.match(at(redraws, 0), /rollout 3\/8/);
  assert.match(redraws.at(-2) ?? '', /update/);
  assert.match(redraws.at(-1) ?? '', /validate/);
});

test('progress on a terminal keeps one line per finished iteration in the history, the live line below them', async () => {
  const { stream, output } = terminal(true, 120);
  const progress = new Progress({ label: 'rl grpo', total: 3, stream });
  for (let iteration = 1; iteration <= 3; iteration++) {
    progress.phase('rollout', '1/4');
    progress.iteration(iteration, { reward: iteration / 4 });
  }
  progress.done();
  await new Promise((resolve) => setImmediate(resolve));
  const history = output()
    .split('\n')
    .map((line) => visible(line.slice(line.lastIndexOf('\r') + 1)))
    .filter((line) => line.trim() !== '');
  assert.deepEqual(
    history.map((line) => /(\d)\/3/.exec(line)?.[1]),
    ['1', '2', '3'],
  );
  assert.ok(
    history.every((line) => /reward/.test(line) && !/rollout/.test(line)),
    history.join('\n'),
  );
  assert.ok(history.every((line) => [...line].length <= 119));
});

test('progress into a pipe: one plain line per iteration, phases only at the interval', async () => {
  const { stream, output } = terminal(false);
  const progress = new Progress({ label: 'rl grpo', total: 2, stream, plainIntervalMs: 60_000 });
  progress.phase('rollout', '1/4');
  progress.iteration(1, { reward: 0.25 });
  progress.phase('update');
  progress.iteration(2, { reward: 0.5 });
  await new Promise((resolve) => setImmediate(resolve));
  const lines = output().trimEnd().split('\n');
  assert.equal(lines.length, 2, output());
  assert.match(at(lines, 0), /1\/2 .*reward 0\.2500/);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: no carriage return and no ANSI escape (ESC, \x1b) when the output is not a terminal
  assert.doesNotMatch(output(), /\r|\x1b/);
});
