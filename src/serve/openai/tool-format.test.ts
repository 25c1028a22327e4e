import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jinjaChatFormat } from '../../chat/jinja-chat-format.ts';
import { tinyChatmlFormat, tinyChatmlTemplate } from '../../chat/tiny-chatml.ts';
import type { ToolCallFamily } from '../../chat/tool-call-format.ts';
import { OutputSplitter, toolCallSyntax, type SplitEvent } from './tool-format.ts';

function formatOf(family: ToolCallFamily) {
  return jinjaChatFormat({
    name: `tiny-${family}`,
    tokenizer: tinyChatmlFormat().tokenizer,
    template: tinyChatmlTemplate,
    stopTokens: [2],
    toolCallFamily: family,
  });
}

/** Feeds `text` one character at a time; returns the events after each update and at the end. */
function splitByCharacter(family: ToolCallFamily, text: string): { during: SplitEvent[]; atEnd: SplitEvent[] } {
  const splitter = new OutputSplitter({ syntax: toolCallSyntax(formatOf(family)), idPrefix: 'call_' });
  const during: SplitEvent[] = [];
  for (let end = 1; end <= text.length; end++) during.push(...splitter.update(text.slice(0, end)));
  return { during, atEnd: splitter.finish(text) };
}

test('llama3: a whole-reply call is held to the end, then parsed; a reply starting with text streams at once', () => {
  const call = splitByCharacter('llama3', ' {"name": "get_weather", "parameters": {"city": "Paris"}}');
  assert.deepEqual(call.during, []);
  assert.deepEqual(call.atEnd, [
    { kind: 'tool_call', call: { id: 'call_0', name: 'get_weather', arguments: { city: 'Paris' } } },
  ]);
  const text = splitByCharacter('llama3', 'It is sunny.');
  assert.equal(text.during.map((event) => (event.kind === 'content' ? event.text : '')).join(''), 'It is sunny.');
});

test('smollm2: text before a block streams, the block becomes its calls, a malformed block stays text', () => {
  const { during, atEnd } = splitByCharacter(
    'smollm2',
    'Sure. <tool_call>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]</tool_call> <tool_call>[oops]</tool_call>',
  );
  const events = [...during, ...atEnd];
  assert.deepEqual(
    events
      .filter((event) => event.kind === 'tool_call')
      .map((event) => event.kind === 'tool_call' && [event.call.id, event.call.name, event.call.arguments]),
    [
      ['call_0', 'a', {}],
      ['call_1', 'b', { x: 1 }],
    ],
  );
  assert.equal(
    events.map((event) => (event.kind === 'content' ? event.text : '')).join(''),
    'Sure.  <tool_call>[oops]</tool_call>',
  );
});

test("a stop string that closes an open call block (the env's '</tool_call>') keeps the call; other stops are left out", () => {
  const run = (text: string, stopStrings: string[]) => {
    const splitter = new OutputSplitter({
      syntax: toolCallSyntax(formatOf('smollm2')),
      idPrefix: 'call_',
      stopStrings,
    });
    const events: SplitEvent[] = [];
    for (let end = 1; end <= text.length; end++) events.push(...splitter.update(text.slice(0, end)));
    events.push(...splitter.finish(text));
    return {
      calls: events.flatMap((event) => (event.kind === 'tool_call' ? [[event.call.name, event.call.arguments]] : [])),
      content: events.map((event) => (event.kind === 'content' ? event.text : '')).join(''),
    };
  };
  const call = '<tool_call>[{"name": "calculator", "arguments": {"expression": "12 * 34"}}]</tool_call>';
  assert.deepEqual(run(`${call} and more`, ['</tool_call>', '</answer>']), {
    calls: [['calculator', { expression: '12 * 34' }]],
    content: '',
  });
  // A close tag with no open block before it is only a stop string: left out of the content.
  assert.deepEqual(run('Done.</tool_call> more', ['</tool_call>']), { calls: [], content: 'Done.' });
  assert.deepEqual(run('<answer>408</answer> more', ['</tool_call>', '</answer>']), {
    calls: [],
    content: '<answer>408',
  });
});

test('a turn end stays in the reply and ends it; a partial one is held back while streaming; a client stop before it wins', () => {
  const run = (text: string, turnEnds: string[], stopStrings: string[] = []) => {
    const splitter = new OutputSplitter({
      syntax: toolCallSyntax(formatOf('smollm2')),
      idPrefix: 'call_',
      turnEnds,
      stopStrings,
    });
    const streamed: string[] = [];
    for (let end = 1; end <= text.length; end++)
      for (const event of splitter.update(text.slice(0, end))) if (event.kind === 'content') streamed.push(event.text);
    const atEnd = splitter.finish(text).flatMap((event) => (event.kind === 'content' ? [event.text] : []));
    return { content: [...streamed, ...atEnd].join(''), streamed: streamed.join('') };
  };
  const ended = run('<answer>408</answer> and more', ['</answer>', '</tool_call>']);
  assert.equal(ended.content, '<answer>408</answer>');
  // Nothing past the turn end was ever streamed, not even the "</" it started with before it was decided.
  assert.ok('<answer>408</answer>'.startsWith(ended.streamed));
  assert.equal(run('<answer>4</ans', ['</answer>']).content, '<answer>4</ans');
  assert.equal(run('<answer>408</answer>', ['</answer>'], ['08']).content, '<answer>4');
  assert.equal(run('<answer>408</answer> 08', ['</answer>'], ['08 ']).content, '<answer>408</answer>');
});
