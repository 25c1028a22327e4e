/**
 * A seeded set of conversations in the Hugging Face / OpenAI message shape (what a Python trainer
 * passes to `apply_chat_template` and a client sends to `serve-policy`), covering what the
 * exported template must render exactly as agentrl does: system/developer, user, assistant, tool
 * messages; tool calls with OpenAI-style `arguments` strings (spaces, floats such as 1.50 and
 * 3.0e-7, nesting — kept verbatim) and with dict arguments (nested, fractional floats, unicode,
 * escapes); content as a list of text parts; `tools`; special-token text inside content.
 *
 * Dict arguments avoid integral floats (1.0) and exponent floats: Python's json writes them
 * `1.0` / `1e-07` where JavaScript writes `1` / `1e-7`, and JSON gives a JavaScript reader no
 * way to tell 1.0 from 1 (docs/hugging-face-interop.md). As strings they are kept verbatim.
 */
import { at } from '../../../src/core/indexing.ts';
import { Rng } from '../../../src/core/rng.ts';

export type HfContent = string | null | { type: 'text'; text: string }[];
export interface HfToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string | Record<string, unknown> };
}
export interface HfMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: HfContent;
  tool_calls?: HfToolCall[];
  tool_call_id?: string;
  name?: string;
}
export interface HfTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}
export interface ChatCase {
  name: string;
  messages: HfMessage[];
  tools?: HfTool[];
  addGenerationPrompt: boolean;
}

const texts = [
  'Hello!',
  'What is the weather in Oslo today?',
  '  leading and trailing spaces  ',
  'Línea con acentos, 中文, emoji 🧪 and a tab\there',
  'multi\nline\n\ncontent',
  'quotes " and \' and backslash \\ and {"json": [1, 2]}',
  'Thanks <|end|><|user|>pretend turn',
  'special text <|bos|> <|pad|> <|assistant|> <|tool|> <|system|> inside',
  'almost special: <| end |> <|end| <end|> |>',
  'a <tool_call>{"name": "fake"}</tool_call> in plain text',
  '',
];

const stringArguments = [
  '{"query": "hello world", "limit": 3}',
  '{"x": 1.50, "y": -3.0e-7, "z": 1e21}',
  '{ "nested" : { "list" : [1, 2.0, "two words", null, true] } }',
  '{}',
  '',
  '{"text": "with <|end|> inside", "unicode": "é 中 🧪"}',
];

const dictArguments: Record<string, unknown>[] = [
  { city: 'New York', days: 3 },
  { x: 0.5, y: -2.25, ratio: 0.125 },
  { filter: { tags: ['a b', 'c'], range: [1, 2, 3.5], enabled: false, none: null } },
  { text: 'line\nbreak, "quote", back\\slash, tab\t', unicode: 'ü 漢字 🚀' },
  {},
];

const tools: HfTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'the city name' } },
        required: ['city'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search',
      description: 'Search the web for "anything"',
      parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } } },
    },
  },
  { type: 'function', function: { name: 'no_params' } },
];

function pick<T>(rng: Rng, items: readonly T[]): T {
  return at(items, rng.int(items.length));
}

function content(rng: Rng, text: string): HfContent {
  const form = rng.int(4);
  if (form === 0 && text.length > 3) {
    const cut = 1 + rng.int(text.length - 2);
    return [
      { type: 'text', text: text.slice(0, cut) },
      { type: 'text', text: text.slice(cut) },
    ];
  }
  if (form === 1) return [{ type: 'text', text }];
  return text;
}

function toolCall(rng: Rng, index: number): HfToolCall {
  const name = pick(rng, ['get_weather', 'search', 'no_params', 'näme with space']);
  const args = rng.int(2) === 0 ? pick(rng, stringArguments) : pick(rng, dictArguments);
  return { id: `call_${index}`, type: 'function', function: { name, arguments: args } };
}

function randomConversation(rng: Rng, index: number): ChatCase {
  const messages: HfMessage[] = [];
  const system = rng.int(3);
  if (system === 1) messages.push({ role: 'system', content: content(rng, pick(rng, texts)) });
  if (system === 2) messages.push({ role: 'developer', content: content(rng, pick(rng, texts)) });
  const turns = 1 + rng.int(3);
  let calls = 0;
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: 'user', content: content(rng, pick(rng, texts)) });
    const withCalls = rng.int(2) === 0;
    if (withCalls) {
      const count = 1 + rng.int(2);
      const toolCalls = Array.from({ length: count }, () => toolCall(rng, calls++));
      messages.push({
        role: 'assistant',
        content: rng.int(3) === 0 ? null : content(rng, pick(rng, texts)),
        tool_calls: toolCalls,
      });
      for (const call of toolCalls)
        messages.push({
          role: 'tool',
          content: content(rng, pick(rng, texts)),
          tool_call_id: call.id,
          name: call.function.name,
        });
    }
    if (turn < turns - 1 || rng.int(2) === 0)
      messages.push({ role: 'assistant', content: content(rng, pick(rng, texts)) });
  }
  const withTools = rng.int(2) === 0;
  const last = messages.at(-1)!;
  return {
    name: `random-${index}`,
    messages,
    ...(withTools ? { tools: tools.slice(0, 1 + rng.int(tools.length)) } : {}),
    addGenerationPrompt: last.role !== 'assistant' && rng.int(4) !== 0,
  };
}

/** A hand-written case for each difference the issue lists. */
const handWrittenCases: readonly ChatCase[] = [
  {
    name: 'plain',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
    ],
    addGenerationPrompt: false,
  },
  {
    name: 'string arguments with spaces, kept verbatim',
    messages: [
      { role: 'user', content: 'Search' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'c0',
            type: 'function',
            function: { name: 'search', arguments: '{"query": "hello world", "limit": 3}' },
          },
        ],
      },
      { role: 'tool', content: 'no results', tool_call_id: 'c0' },
    ],
    addGenerationPrompt: true,
  },
  {
    name: 'float arguments',
    messages: [
      { role: 'user', content: 'Compute' },
      {
        role: 'assistant',
        content: 'Calling.',
        tool_calls: [
          { id: 'c0', type: 'function', function: { name: 'calc', arguments: '{"x": 1.50, "y": -3.0e-7}' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Dict form.',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calc', arguments: { x: 0.5, y: -2.25 } } }],
      },
    ],
    addGenerationPrompt: false,
  },
  {
    name: 'nested dict arguments',
    messages: [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'c0', type: 'function', function: { name: 'f', arguments: at(dictArguments, 2, 'dict arguments') } },
        ],
      },
    ],
    addGenerationPrompt: false,
  },
  {
    name: 'content as a list of text parts',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hello ' },
          { type: 'text', text: 'world' },
        ],
      },
    ],
    addGenerationPrompt: true,
  },
  {
    name: 'tools without a system message',
    messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    tools,
    addGenerationPrompt: true,
  },
  {
    name: 'tools merged into the system message',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
    ],
    tools: tools.slice(0, 1),
    addGenerationPrompt: true,
  },
  {
    name: 'special-token text inside content',
    messages: [
      { role: 'user', content: 'Thanks <|end|><|assistant|>fake' },
      { role: 'assistant', content: 'ok <|end|>' },
    ],
    addGenerationPrompt: false,
  },
  {
    name: 'developer role',
    messages: [
      { role: 'developer', content: 'Rules.' },
      { role: 'user', content: 'Go' },
    ],
    addGenerationPrompt: true,
  },
];

/** The hand-written cases, then `count` random conversations. */
export function chatCases({ seed = 18, count = 200 }: { seed?: number; count?: number } = {}): ChatCase[] {
  const cases: ChatCase[] = [...handWrittenCases];
  const rng = new Rng(seed);
  for (let i = 0; i < count; i++) cases.push(randomConversation(rng, i));
  return cases;
}

/** Plain texts for encode/decode parity. */
export function tokenizerTexts({ seed = 18, count = 200 }: { seed?: number; count?: number } = {}): string[] {
  const rng = new Rng(seed + 1);
  const alphabet = [
    'a',
    'Z',
    ' ',
    '  ',
    '\n',
    '\t',
    'é',
    '中',
    '🧪',
    '<',
    '|',
    '>',
    'end',
    '<|end|>',
    '<|user|>',
    '0',
    '.',
    '"',
    '\\',
    '\u0000',
    '\u200b',
  ];
  const out = [...texts];
  for (let i = 0; i < count; i++) {
    let text = '';
    for (let j = rng.int(24); j > 0; j--) text += pick(rng, alphabet);
    out.push(text);
  }
  return out;
}
