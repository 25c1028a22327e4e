/**
 * agentrl's scripted experts as a line protocol for check.py (one JSON object a line):
 *
 *   → {"act": "frozen-lake/0", "env": "frozen-lake", "seed": 0, "observation": {"text": …, "data": …}}
 *   ← {"text": "<answer>Left</answer>", "tool_call": null}
 *   ← {"text": "<tool_call>…</tool_call>", "tool_call": {"name": "calculator", "arguments": {…}}}
 *   → {"tools": "mcp-files"}   ← {"tools": ["read_file", …]}   (the env's tools in the episode of seed 0)
 *
 * The observation is the one the Python client received over the wire, so an expert that acts
 * well shows that `data` travelled intact. The server never sends `observation.privileged` (the
 * answer an expert plays from), so each `act` key has a local copy of the env that follows the
 * episode — reset with its seed, then stepped with the expert's previous action — and lends it
 * its privileged part (what envs/with-privileged.ts does for a RemoteEnv). One expert and one copy
 * per `act` key (an expert may remember the turns of its episode); the copies of an env are
 * closed when a request for another env arrives and at the end of input. `tool_call` is the
 * action read as a tool call (`<tool_call>` or the search env's `<search>`), for MCPToolClient.call_tool.
 */
import { createInterface } from 'node:readline';
import type { Env, Observation } from '../../../src/core/types.ts';
import { InvalidArgumentError } from '../../../src/core/errors.ts';
import { parseAction } from '../../../src/envs/action-format.ts';
import type { Expert } from '../../../src/envs/expert.ts';
import { getEnvironment } from '../../../src/envs/index.ts';
import { at } from '../../../src/core/indexing.ts';

interface Follower {
  env: string;
  expert: Expert;
  copy: Env;
  lastAction: string | null;
}

const followers = new Map<string, Follower>();

function toolCallOf(text: string): { name: string; arguments: Record<string, unknown> } | null {
  const parsed = parseAction(text, { maxChars: 1_000_000 });
  if (parsed.kind === 'tool_call') return parsed.call;
  const search = /<search>([\s\S]*?)<\/search>/.exec(text);
  return search === null ? null : { name: 'search', arguments: { query: at(search, 1).trim() } };
}

/** Closes the copies of every env but `keep` (check.py plays one env at a time). */
async function closeFollowers(keep: string | null): Promise<void> {
  for (const [key, follower] of followers) {
    if (follower.env === keep) continue;
    followers.delete(key);
    await follower.copy.close?.();
  }
}

/** The copy's observation at the same point of the episode as the client's. */
async function follow(follower: Follower, seed: number, observation: Observation): Promise<Observation> {
  if (follower.lastAction === null) {
    const first = await follower.copy.reset({ seed });
    if (first.text !== observation.text)
      throw new InvalidArgumentError(
        `${follower.env} seed ${seed}: the local copy starts another episode than the server`,
      );
    return first;
  }
  return (await follower.copy.step({ text: follower.lastAction })).observation;
}

async function act(key: string, env: string, seed: number, observation: Observation): Promise<unknown> {
  await closeFollowers(env);
  let follower = followers.get(key);
  if (follower === undefined) {
    const descriptor = getEnvironment(env);
    follower = { env, expert: descriptor.expert({ seed: 0 }), copy: descriptor.make(), lastAction: null };
    followers.set(key, follower);
  }
  const { privileged } = await follow(follower, seed, observation);
  const text = follower.expert.act(privileged === undefined ? observation : { ...observation, privileged });
  follower.lastAction = text;
  return { text, tool_call: toolCallOf(text) };
}

async function answer(request: {
  act?: string;
  env?: string;
  seed?: number;
  observation?: Observation;
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
  const { act: key, env, seed, observation } = request;
  if (key === undefined || env === undefined || seed === undefined || observation === undefined)
    throw new InvalidArgumentError('an act request needs act, env, seed and observation');
  return act(key, env, seed, observation);
}

let queue = Promise.resolve();
createInterface({ input: process.stdin })
  .on('line', (line) => {
    queue = queue.then(async () => {
      let reply: unknown;
      try {
        reply = await answer(JSON.parse(line));
      } catch (error) {
        reply = { error: error instanceof Error ? error.message : String(error) };
      }
      process.stdout.write(`${JSON.stringify(reply)}\n`);
    });
  })
  .on('close', () => {
    queue = queue.then(() => closeFollowers(null));
  });
