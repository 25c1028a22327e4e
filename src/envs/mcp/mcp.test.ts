import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { at } from '../../core/indexing.ts';
import { formatToolCall } from '../action-format.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { connectMcp, McpConnectionError } from './client.ts';
import { mcpFilesExpert } from './expert.ts';
import { makeMcpFiles, openFilesWorkspace, type McpFilesData, type McpFilesPrivileged } from './files-env.ts';
import { zodFromJsonSchema } from './json-schema.ts';

const workspace = openFilesWorkspace({ workspaceSeed: 11, noteCount: 24 });
after(async () => (await workspace).close());

envContract('mcp-files', () => makeMcpFiles({ formatPenalty: 0.1 }, { workspace }), {
  makeExpert: mcpFilesExpert,
  invalidActions: [
    '<tool_call>{"name": "read_text_file", "arguments": {"path": 3}}</tool_call>',
    '<tool_call>{"name": "rm", "arguments": {}}</tool_call>',
  ],
  invalidActionReward: -0.1,
});

test('server-filesystem (npm, stdio): its tools become the env tools, with zod schemas from JSON Schema', async () => {
  const env = makeMcpFiles({}, { workspace });
  await env.reset({ seed: 0 });
  const names = env.tools.map((tool) => tool.name);
  for (const name of ['read_text_file', 'list_directory', 'search_files', 'write_file'])
    assert.ok(names.includes(name), name);
  const read = env.tools.find((tool) => tool.name === 'read_text_file')!;
  assert.equal(read.inputSchema.safeParse({ path: 'a' }).success, true);
  assert.equal(read.inputSchema.safeParse({}).success, false);
  const listing = await env.step({ text: formatToolCall({ name: 'list_directory', arguments: { path: 'notes' } }) });
  assert.match(listing.observation.text, /^<tool_response>\[FILE\] [a-z]+-\d+\.txt/);
  const outside = await env.step({
    text: formatToolCall({ name: 'read_text_file', arguments: { path: '/etc/passwd' } }),
  });
  assert.match(outside.observation.text, /^<tool_response>error: Access denied - path outside allowed directories/);
  assert.equal(outside.info.invalidAction, false);
});

test('mcp-files expert answers every note through the MCP server; random answers do not', async () => {
  const env = makeMcpFiles({}, { workspace });
  let expertWins = 0;
  let randomWins = 0;
  for (const seed of splitSeeds('test', 24)) {
    const episode = await playEpisode(env, mcpFilesExpert({ seed }), seed);
    if (episode.success) expertWins++;
    assert.equal(episode.turns, 2);
    if ((await playEpisode(env, mcpFilesExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, 24);
  assert.ok(randomWins <= 3, `random ${randomWins}/24`);
});

test('an env that owns its workspace removes it on close', async () => {
  const env = makeMcpFiles({ noteCount: 2 });
  await env.reset({ seed: 1 });
  const folder = (await (env as unknown as { workspace: Promise<{ folder: string }> }).workspace).folder;
  assert.ok(existsSync(folder));
  await env.close();
  assert.ok(!existsSync(folder));
});

test('every episode starts on a fresh workspace: what episode 1 wrote, moved or added is gone in episode 2', async () => {
  const env = makeMcpFiles({ noteCount: 2 });
  try {
    const call = async (name: string, args: Record<string, unknown>) =>
      (await env.step({ text: formatToolCall({ name, arguments: args }) })).observation.text;
    const first = await env.reset({ seed: 0 });
    const { task } = first.data as McpFilesData;
    const { answer } = first.privileged as McpFilesPrivileged;
    const listing = await call('list_directory', { path: 'notes' });
    const other = [...listing.matchAll(/\[FILE\] ([a-z]+-\d+\.txt)/g)]
      .map((match) => `notes/${match[1]}`)
      .find((file) => file !== task.file)!;
    assert.match(
      await call('write_file', { path: task.file, content: 'The code word is tampered.\n' }),
      /Successfully wrote/,
    );
    assert.match(await call('move_file', { source: other, destination: 'moved.txt' }), /Successfully moved/);
    await env.reset({ seed: 0 });
    assert.match(await call('read_text_file', { path: task.file }), new RegExp(`The code word is ${answer}\\.`));
    assert.match(await call('read_text_file', { path: other }), /^<tool_response>Note \d+\./);
    assert.match(await call('list_directory', { path: '.' }), /^<tool_response>\[DIR\] notes<\/tool_response>$/);
  } finally {
    await env.close();
  }
});

test('an MCP server over streamable HTTP (SDK server on 127.0.0.1) works the same; a dead one is a typed error', async () => {
  const http = createServer(async (request, response) => {
    const server = new McpServer({ name: 'adder', version: '1.0.0' });
    server.registerTool(
      'add',
      { description: 'adds', inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => void transport.close());
    await server.connect(transport);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    await transport.handleRequest(
      request,
      response,
      chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString()) : undefined,
    );
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  try {
    const mcp = await connectMcp({ url });
    assert.deepEqual(
      mcp.tools.map((tool) => tool.name),
      ['add'],
    );
    const add = at(mcp.tools, 0, 'mcp tools');
    assert.equal(await add.execute({ a: 2, b: 40 }), '42');
    assert.equal(add.inputSchema.safeParse({ a: 'x', b: 1 }).success, false);
    await mcp.close();
  } finally {
    http.close();
  }
  await assert.rejects(connectMcp({ url }, { timeoutMs: 2000 }), McpConnectionError);
});

test('zodFromJsonSchema: objects, required, enums, arrays, integers', () => {
  const schema = zodFromJsonSchema({
    type: 'object',
    properties: {
      mode: { enum: ['a', 'b'] },
      n: { type: 'integer' },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['mode'],
  });
  assert.equal(schema.safeParse({ mode: 'a', n: 2, tags: ['x'] }).success, true);
  assert.equal(schema.safeParse({ mode: 'c' }).success, false);
  assert.equal(schema.safeParse({ mode: 'a', n: 1.5 }).success, false);
  assert.equal(schema.safeParse({ n: 1 }).success, false);
});
