import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  actionCharLimits,
  actionChars,
  formatAnswer,
  formatToolCall,
  parseAction,
  parseMoveAction,
  parseMoves,
} from './action-format.ts';

const moves = ['Left', 'Down', 'Right', 'Up'];

test('parseAction: valid answers, with and without thinking, whitespace around tags', () => {
  assert.deepEqual(parseAction('<answer>Right</answer>'), { kind: 'answer', thinking: null, answer: 'Right' });
  assert.deepEqual(parseAction('  <think> go right </think>\n<answer> Right || Up </answer>\n'), {
    kind: 'answer',
    thinking: 'go right',
    answer: 'Right || Up',
  });
  assert.deepEqual(parseAction('<think></think><answer>42</answer>'), { kind: 'answer', thinking: '', answer: '42' });
});

test('parseAction: tool calls (Hermes style)', () => {
  assert.deepEqual(
    parseAction('<think>t</think><tool_call>{"name": "calculator", "arguments": {"expression": "1+2"}}</tool_call>'),
    {
      kind: 'tool_call',
      thinking: 't',
      call: { name: 'calculator', arguments: { expression: '1+2' } },
    },
  );
  assert.deepEqual(parseAction('<tool_call>{"name": "now"}</tool_call>'), {
    kind: 'tool_call',
    thinking: null,
    call: { name: 'now', arguments: {} },
  });
  const text = formatToolCall({ name: 'calculator', arguments: { expression: '3 * 4' } }, 'why');
  assert.deepEqual(parseAction(text), {
    kind: 'tool_call',
    thinking: 'why',
    call: { name: 'calculator', arguments: { expression: '3 * 4' } },
  });
  assert.deepEqual(parseAction(formatAnswer('Up', 'x')), { kind: 'answer', thinking: 'x', answer: 'Up' });
});

test('parseAction: malformed outputs are invalid with a reason', () => {
  const cases: Array<[string, string]> = [
    ['', 'empty output'],
    ['Right', 'missing <answer> or <tool_call> tags'],
    ['<think>only thinking</think>', 'missing <answer> or <tool_call>'],
    ['<answer>Right', '<answer> is not closed'],
    ['Right</answer>', 'text outside tags: "Right"'],
    ['</answer>', '</answer> without <answer>'],
    ['I think <answer>Right</answer>', 'text outside tags: "I think"'],
    ['<answer>Right</answer> done', 'text outside tags: "done"'],
    ['<answer>Right</answer><answer>Up</answer>', 'more than one <answer>/<tool_call>'],
    ['<answer>1</answer><tool_call>{"name": "c"}</tool_call>', 'more than one <answer>/<tool_call>'],
    ['<think>a</think><think>b</think><answer>Up</answer>', 'more than one <think>'],
    ['<answer>Up</answer><think>late</think>', '<think> must come before the answer'],
    ['<think>hmm <answer>Up</answer></think>', '<answer> inside <think>'],
    ['<answer><answer>Up</answer></answer>', '<answer> inside <answer>'],
    ['<think>a</answer>', '<think> closed by </answer>'],
    ['<answer>  </answer>', 'empty <answer>'],
    ['<tool_call>{"name": calculator}</tool_call>', 'tool_call is not valid JSON'],
    ['<tool_call>["calculator"]</tool_call>', 'tool_call must be {"name": string, "arguments": object}'],
    [
      '<tool_call>{"name": "c", "arguments": "1+2"}</tool_call>',
      'tool_call must be {"name": string, "arguments": object}',
    ],
    ['<ANSWER>Up</ANSWER>', 'missing <answer> or <tool_call> tags'],
  ];
  for (const [text, reason] of cases) assert.deepEqual(parseAction(text), { kind: 'invalid', reason }, text);
});

test('parseMoves: case-insensitive names, numbers, || separator, max per turn', () => {
  assert.deepEqual(parseMoves('right', { moves, maxActionsPerTurn: 1 }), { kind: 'moves', moves: [2] });
  assert.deepEqual(parseMoves('UP || 1 ||down', { moves, maxActionsPerTurn: 5 }), { kind: 'moves', moves: [3, 0, 1] });
  assert.deepEqual(parseMoves('Up || Up', { moves, maxActionsPerTurn: 1 }), {
    kind: 'invalid',
    reason: 'at most 1 move per turn, got 2',
  });
  assert.deepEqual(parseMoves('Jump', { moves, maxActionsPerTurn: 1 }), {
    kind: 'invalid',
    reason: 'unknown move "Jump"; allowed: Left, Down, Right, Up or 1-4',
  });
  assert.equal(parseMoves('5', { moves, maxActionsPerTurn: 1 }).kind, 'invalid');
  assert.equal(parseMoves('Up ||', { moves, maxActionsPerTurn: 3 }).kind, 'invalid');
  assert.equal(parseMoves('Up Left', { moves, maxActionsPerTurn: 3 }).kind, 'invalid');
});

test('parseMoveAction rejects tool calls in move-only envs', () => {
  const reason = 'no tools here; reply <answer>move</answer>';
  assert.deepEqual(parseMoveAction({ text: '<tool_call>{"name": "x"}</tool_call>' }, { moves, maxActionsPerTurn: 1 }), {
    kind: 'invalid',
    reason,
  });
  assert.deepEqual(
    parseMoveAction({ text: '', toolCall: { id: '1', name: 'x', arguments: {} } }, { moves, maxActionsPerTurn: 1 }),
    { kind: 'invalid', reason },
  );
  assert.deepEqual(parseMoveAction({ text: '<answer>Up</answer>' }, { moves, maxActionsPerTurn: 1 }), {
    kind: 'moves',
    moves: [3],
  });
});

test('action size limits: one character over is invalid and names the limit; a tool call counts its JSON arguments', () => {
  const fits = `<answer>${'x'.repeat(actionCharLimits.text - 17)}</answer>`;
  assert.equal(fits.length, actionCharLimits.text);
  assert.equal(parseAction(fits).kind, 'answer');
  assert.deepEqual(parseAction(`${fits} `), {
    kind: 'invalid',
    reason: `action of ${actionCharLimits.text + 1} characters is over the limit of ${actionCharLimits.text}`,
  });
  assert.deepEqual(parseAction('<answer>Up</answer>', { maxChars: 10 }), {
    kind: 'invalid',
    reason: 'action of 19 characters is over the limit of 10',
  });
  const call = { id: '1', name: 'search', arguments: { query: 'abc' } };
  assert.equal(actionChars({ text: '', toolCall: call }), 'search'.length + '{"query":"abc"}'.length);
  assert.equal(
    parseMoveAction(
      { text: `<answer>Up</answer>${' '.repeat(actionCharLimits.moves)}` },
      { moves, maxActionsPerTurn: 1 },
    ).kind,
    'invalid',
  );
  assert.match(
    (
      parseMoveAction(
        { text: '', toolCall: { ...call, arguments: { query: 'x'.repeat(actionCharLimits.moves) } } },
        { moves, maxActionsPerTurn: 1 },
      ) as { reason: string }
    ).reason,
    /over the limit of 4096/,
  );
});

test('bounded work per action: inputs built to make a parser slow, at the largest limit (64 KB), parse in well under 50 ms', () => {
  const size = actionCharLimits.code;
  const shapes: Array<[string, string]> = [
    ['many tags', `<think>${'</think><think>'.repeat(size / 16)}`],
    ['unclosed answer', `<answer>${'a<'.repeat(size / 2 - 8)}`],
    ['spaces before text', `${' '.repeat(size - 1)}x`],
    ['moves', `<answer>${'Up || '.repeat(size / 6 - 4)}Up</answer>`],
    ['nested-looking JSON', `<tool_call>${'{"a":'.repeat(size / 5 - 5)}</tool_call>`],
  ];
  for (const [name, text] of shapes) {
    assert.ok(text.length <= size, `${name}: ${text.length} characters`);
    let fastest = Infinity;
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      parseMoveAction({ text }, { moves, maxActionsPerTurn: size, maxChars: size });
      parseAction(text, { maxChars: size });
      fastest = Math.min(fastest, performance.now() - started);
    }
    assert.ok(fastest < 50, `${name}: ${fastest.toFixed(1)} ms`);
  }
});
