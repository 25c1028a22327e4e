import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ToolTaskStep, ToolTaskTurn } from './tool-task.ts';
import { firstWellFormedCall, type FirstCallEpisode } from './tool-task-rewards.ts';

const toolTurn: ToolTaskTurn = { kind: 'tool', run: { ok: true, tool: 'calculator', output: 4, text: '4' } };
const step = (turnsUsed: number, firstCallTurn: number | null, turn: ToolTaskTurn = toolTurn) =>
  ({ episode: { turnsUsed, firstCallTurn }, turn }) as ToolTaskStep<FirstCallEpisode>;

test('call_format (format): 1 on the turn of the first well-formed call, 0 on later calls and on other turns', async () => {
  const callFormat = firstWellFormedCall<FirstCallEpisode>();
  assert.deepEqual([callFormat.name, callFormat.kind], ['call_format', 'format']);
  assert.equal(await callFormat(step(1, 1)), 1);
  const failedTool: ToolTaskTurn = {
    kind: 'tool',
    run: { ok: false, tool: 'calculator', kind: 'tool-error', error: 'x' },
  };
  assert.equal(await callFormat(step(2, 2, failedTool)), 1, 'a call whose tool threw was still well formed');
  assert.equal(await callFormat(step(3, 1)), 0, 'a later call');
  assert.equal(await callFormat(step(1, null, { kind: 'invalid', reason: 'bad json' })), 0);
  assert.equal(await callFormat(step(2, 1, { kind: 'answer', success: true, thinking: null })), 0);
});
