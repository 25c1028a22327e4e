/**
 * agentrl's scripted experts as a line protocol for check.py (one JSON object a line):
 *
 *   → {"act": "frozen-lake/0", "env": "frozen-lake", "observation": {"text": …, "data": …}}
 *   ← {"text": "<answer>Left</answer>", "tool_call": null}
 *   ← {"text": "<tool_call>…</tool_call>", "tool_call": {"name": "calculator", "arguments": {…}}}
 *   → {"tools": "mcp-files"}   ← {"tools": ["read_file", …]}   (the env's tools in the episode of seed 0)
 *
 * The observation is the one the Python client received over the wire, so an expert that acts
 * well shows that `data` travelled intact. One expert per `act` key (an expert may remember the
 * turns of its episode). `tool_call` is the action read as a tool call (`<tool_call>` or the
 * search env's `<search>`), for MCPToolClient.call_tool.
 */
import { createInterface } from 'node:readline';
import { parseAction } from '../../../src/envs/action-format.ts';
import type { Expert } from '../../../src/envs/expert.ts';
import { getEnvironment } from '../../../src/envs/index.ts';
import { at } from '../../../src/core/indexing.ts';

const experts = new Map<string, Expert>();

function toolCallOf(text: string): { name: string; arguments: Record<string, unknown> } | null {
  const parsed = parseAction(text, { maxChars: 1_000_000 });
  if (parsed.kind === 'tool_call') return parsed.call;
  const search = /<search>([\s\S]*?)<\/search>/.exec(text);
  return search === null ? null : { name: 'search', arguments: { query: at(search, 1).trim() } };
}

async function answer(request: {
  act?: string;
  env?: string;
  observation?: { text: string; data?: unknown };
  tools?: string;
}): Promise<unknown> {
  if (request.tools !== undefined) {
    const env = getEnvironment(request.tools).make();
    try {
      await env.reset({ seed: 0 });
      return { tools: (env.tools ?? []).map((tool) => tool.name) };
    } finally {
      await env.close?.();
    }
  }
  const key = request.act!;
  let expert = experts.get(key);
  if (expert === undefined) {
    expert = getEnvironment(request.env!).expert({ seed: 0 });
    experts.set(key, expert);
  }
  const text = expert.act(request.observation!);
  return { text, tool_call: toolCallOf(text) };
}

let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  queue = queue.then(async () => {
    let reply: unknown;
    try {
      reply = await answer(JSON.parse(line));
    } catch (error) {
      reply = { error: error instanceof Error ? error.message : String(error) };
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  });
});
