import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { monitorSignals, parseMonitorThresholds, rewardMonitor, rewardMonitorConfigSchema } from './index.ts';
import { constructedRun, sumRewardSpec } from './monitor-test-fixture.ts';

test('a healthy constructed run: every signal measured, none fires in any iteration', () => {
  const monitor = rewardMonitor({ rewardSpec: sumRewardSpec });
  const reports = constructedRun({ iterations: 12 }).map((iteration) => monitor.observe(iteration));
  for (const report of reports) assert.deepEqual(report.fired, [], `iteration ${report.iteration}`);
  const last = at(reports, reports.length - 1);
  // Silence with evidence, not for want of it: each signal's statistic is there by the end.
  for (const signal of monitorSignals) {
    assert.equal(last.metrics[`monitor/${signal}/fired`], 0, signal);
    assert.ok(
      Number.isFinite(last.metrics[`monitor/${signal}`]),
      `monitor/${signal} measured: ${last.readings[signal].message}`,
    );
  }
  assert.equal(last.stop, false);
});

test('mode stop: a fired signal asks to stop, with its reason; warn reports it without stopping; off warns nothing', () => {
  const collapsing = { entropy: (iteration: number, healthy: number) => (iteration >= 5 ? 0.05 : healthy) };
  const run = constructedRun({ iterations: 5, ...collapsing });
  const observeAll = (mode: 'warn' | 'stop' | 'off') => {
    const monitor = rewardMonitor({ config: { mode }, rewardSpec: sumRewardSpec });
    return run.map((iteration) => monitor.observe(iteration));
  };
  const stopped = observeAll('stop');
  assert.deepEqual(
    stopped.map((r) => r.stop),
    [false, false, false, false, true],
  );
  const fired = at(at(stopped, 4).fired, 0);
  assert.equal(fired.signal, 'entropy-collapse');
  assert.match(fired.message, /mean token entropy 0\.050 nats: 5\.\d% of its early mean/);
  const warned = observeAll('warn');
  assert.deepEqual(
    at(warned, 4).fired.map((f) => f.signal),
    ['entropy-collapse'],
  );
  assert.equal(at(warned, 4).stop, false);
  const off = observeAll('off');
  assert.deepEqual(at(off, 4).fired, []);
  assert.equal(at(off, 4).stop, false);
});

test('an iteration without episodes or entropy: no statistic, nothing fires, nothing throws', () => {
  const monitor = rewardMonitor();
  for (let iteration = 1; iteration <= 5; iteration++) {
    const report = monitor.observe({ iteration, episodes: [], entropy: Number.NaN });
    assert.deepEqual(report.fired, []);
    assert.deepEqual(Object.keys(report.metrics).sort(), monitorSignals.map((s) => `monitor/${s}/fired`).sort());
  }
});

test('config: every field has a default; a bad or unknown threshold is refused, naming it', () => {
  const defaults = rewardMonitorConfigSchema.parse({});
  assert.equal(defaults.mode, 'warn');
  assert.equal(defaults.entropyCollapse.dropFraction, 0.8);
  assert.equal(parseMonitorThresholds('{"entropyCollapse":{"floor":0.5}}').entropyCollapse.floor, 0.5);
  assert.equal(parseMonitorThresholds('{"entropyCollapse":{"floor":0.5}}').entropyCollapse.dropFraction, 0.8);
  assert.throws(
    () => parseMonitorThresholds('{"entropyColapse":{}}'),
    (error: unknown) => {
      assert.ok(error instanceof InvalidArgumentError);
      assert.match(error.message, /entropyColapse.*signals: rewardValidationDivergence, answerLeakage/);
      return true;
    },
  );
  assert.throws(() => parseMonitorThresholds('{"answerLeakage":{"threshold":-1}}'), /answerLeakage\.threshold/);
  assert.throws(() => parseMonitorThresholds('{nope'), /not JSON/);
  assert.throws(() => rewardMonitorConfigSchema.parse({ mode: 'panic' }), /warn|stop|off/);
});

test('hostile episodes: NaN and infinite rewards, no turns, unclosed tags, regex characters — nothing throws or fires', () => {
  const monitor = rewardMonitor({ rewardSpec: sumRewardSpec });
  const odd = (groupId: string, index: number) => ({
    groupId,
    totalReward: [Number.NaN, Number.POSITIVE_INFINITY, -1, 0][index % 4] ?? 0,
    success: false,
    rewardComponents: { correct: Number.NaN, format: Number.POSITIVE_INFINITY },
    turns:
      index % 3 === 0
        ? []
        : [
            { action: '<tool_call>{', observation: '<tool_response>unclosed <information>' },
            { action: `<answer>.*+?(${index}[</answer>`, observation: '' },
          ],
  });
  for (let iteration = 1; iteration <= 6; iteration++) {
    const episodes = Array.from({ length: 40 }, (_, i) => odd(`g${i % 5}`, i));
    const report = monitor.observe({ iteration, episodes, entropy: iteration === 3 ? Number.POSITIVE_INFINITY : 1 });
    assert.deepEqual(report.fired, [], JSON.stringify(report.readings));
    for (const value of Object.values(report.metrics)) assert.ok(Number.isFinite(value));
  }
});
