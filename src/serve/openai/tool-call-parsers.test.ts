/**
 * Every reader of a `<tool_call>` payload on the same inputs: the env action format, agentrl's
 * byte template, the family formats (smollm2, qwen, llama3) and the server's agentrl syntax.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseAssistantText } from '../../chat/chat-template.ts';
import { parseToolCalls, type ToolCallFamily } from '../../chat/tool-call-format.ts';
import { parseAction } from '../../envs/action-format.ts';
import { agentrlToolCallSyntax } from './tool-format.ts';

type Read = { name: string; arguments: Record<string, unknown> }[] | 'invalid' | 'text';

const calls = (toolCalls: readonly { name: string; arguments: Record<string, unknown> }[]): Read =>
  toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args }));

/** Each reader's view of one payload: its calls, 'invalid' (the env: its reason), 'text' (not a call at all). */
const readers: Record<string, (payload: string) => Read | string> = {
  env: (payload) => {
    const parsed = parseAction(`<tool_call>${payload}</tool_call>`);
    return parsed.kind === 'tool_call' ? [parsed.call] : parsed.kind === 'invalid' ? parsed.reason : 'text';
  },
  agentrl: (payload) => blockRead(parseAssistantText(`<tool_call>${payload}</tool_call>`)),
  smollm2: (payload) => familyRead('smollm2', `<tool_call>${payload}</tool_call>`),
  qwen: (payload) => familyRead('qwen', `<tool_call>${payload}</tool_call>`),
  llama3: (payload) => familyRead('llama3', payload),
  server: (payload) => {
    const read = agentrlToolCallSyntax.parse(payload);
    return read === null ? 'invalid' : calls(read);
  },
};

function blockRead(parsed: {
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
  invalid: string[];
}): Read {
  if (parsed.invalid.length > 0) return 'invalid';
  return parsed.toolCalls.length === 0 ? 'text' : calls(parsed.toolCalls);
}

function familyRead(family: ToolCallFamily, text: string): Read {
  return blockRead(parseToolCalls(family, text));
}

const json = 'tool_call is not valid JSON';
const shape = 'tool_call must be {"name": string, "arguments": object}';
const add = [{ name: 'add', arguments: { a: 1 } }];
const addEmpty = [{ name: 'add', arguments: {} }];

/** payload → expected read per reader (readers not listed read `all`). */
const cases: { payload: string; all: Read | string; except?: Record<string, Read | string> }[] = [
  { payload: '{"name": "add", "arguments": {"a": 1}}', all: add },
  { payload: '{"name": "now"}', all: [{ name: 'now', arguments: {} }] },
  { payload: '\n{"name": "add", "arguments": {"a": 1}}\n', all: add },
  { payload: '{"name": "add", "parameters": {"a": 1}}', all: addEmpty, except: { llama3: add } },
  { payload: '{"name": "add", "arguments": {"a": 1}, "id": 7}', all: add },
  { payload: '{"name": "", "arguments": {}}', all: 'invalid', except: { env: shape } },
  { payload: '{"name": "   "}', all: 'invalid', except: { env: shape } },
  { payload: '{"name": " add ", "arguments": {}}', all: addEmpty },
  { payload: '{"name": "add", "arguments": null}', all: 'invalid', except: { env: shape } },
  { payload: '{"name": "add", "arguments": [1]}', all: 'invalid', except: { env: shape } },
  { payload: '{"name": 1, "arguments": {}}', all: 'invalid', except: { env: shape } },
  { payload: '{"name": "add", "arguments": "{\\"a\\": 1}"}', all: 'invalid', except: { env: shape } },
  { payload: '{oops', all: 'invalid', except: { env: json } },
  { payload: '', all: 'invalid', except: { env: json, llama3: 'text' } },
  { payload: '"add"', all: 'invalid', except: { env: shape, llama3: 'text' } },
  {
    payload: '[{"name": "add", "arguments": {}}]',
    all: 'invalid',
    except: { env: shape, smollm2: addEmpty, llama3: 'text' },
  },
  {
    payload: '[{"name": "add", "arguments": {}}, {"name": ""}]',
    all: 'invalid',
    except: { env: shape, llama3: 'text' },
  },
  { payload: '[]', all: 'invalid', except: { env: shape, llama3: 'text' } },
];

test('every <tool_call> reader reads the same payloads the same way (one rule: {"name": non-empty string, "arguments"?: object}, the name trimmed)', () => {
  const disagreements: string[] = [];
  for (const { payload, all, except = {} } of cases) {
    for (const [reader, read] of Object.entries(readers)) {
      const got = read(payload);
      const want = except[reader] ?? all;
      if (JSON.stringify(got) !== JSON.stringify(want))
        disagreements.push(
          `${reader} on ${JSON.stringify(payload)}: ${JSON.stringify(got)}, not ${JSON.stringify(want)}`,
        );
    }
  }
  assert.deepEqual(disagreements, []);
});
