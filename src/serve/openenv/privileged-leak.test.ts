/**
 * Issue 27, point 1: the env server never hands a client what the agent must not see. For every
 * shipped env, a real server on 127.0.0.1 answers HTTP `/reset` and `/step` and a whole scripted
 * episode over the WebSocket `/ws`, while a local copy of the env plays the same seed and actions.
 * Each reply must carry no `privileged` field, exactly the local observation's public `data`, and
 * none of the env's private values (below) that the observation's own text does not show the agent
 * at that point (the code word is fine once the agent has read its file).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Observation } from '../../core/types.ts';
import { at } from '../../core/indexing.ts';
import type { AbsoluteZeroPrivileged } from '../../envs/absolute-zero/env.ts';
import type { BanditPrivileged } from '../../envs/bandit/env.ts';
import type { CodePrivileged } from '../../envs/code/env.ts';
import { environments, splitSeeds, type EnvDescriptor } from '../../envs/index.ts';
import type { MathPrivileged } from '../../envs/math/env.ts';
import type { McpFilesPrivileged } from '../../envs/mcp/files-env.ts';
import type { NegotiationPrivileged } from '../../envs/negotiation/env.ts';
import type { SearchPrivileged } from '../../envs/search/env.ts';
import type { SwePrivileged } from '../../envs/swe/env.ts';
import type { WebShopPrivileged } from '../../envs/webshop/env.ts';
import { OpenEnvClient } from './client.ts';
import { startEnvServer, type EnvServer } from './env-server.ts';

/** A private value: as the agent would read it in the observation text, and as it would appear in a JSON reply. */
interface Secret {
  shown: string;
  wire: string;
}

/** An extractor of one env's private values from its `privileged` part. */
function valuesOf<Privileged>(extract: (privileged: Privileged) => unknown[]): (privileged: unknown) => Secret[] {
  return (privileged) =>
    extract(privileged as Privileged).map((value) =>
      typeof value === 'string'
        ? { shown: value, wire: JSON.stringify(value).slice(1, -1) }
        : { shown: JSON.stringify(value), wire: JSON.stringify(value) },
    );
}

/** Per env with a privileged part: its private values, each distinctive enough to search for. */
const privateValues: Record<string, (privileged: unknown) => Secret[]> = {
  bandit: valuesOf<BanditPrivileged>((p) => [p.payProbabilities]),
  code: valuesOf<CodePrivileged>((p) => [p.solution, p.tests]),
  swe: valuesOf<SwePrivileged>((p) => [
    p.goldPatch,
    ...p.goldPatch.map((edit) => edit.replace),
    ...Object.values(p.hiddenTests),
  ]),
  math: valuesOf<MathPrivileged>((p) => [p.solution, p.answer]),
  search: valuesOf<SearchPrivileged>((p) => [p.answer]),
  'mcp-files': valuesOf<McpFilesPrivileged>((p) => [p.answer]),
  webshop: valuesOf<WebShopPrivileged>((p) => [p.goal.productId, p.goal]),
  'browser-shop': valuesOf<WebShopPrivileged>((p) => [p.goal.productId, p.goal]),
  negotiation: valuesOf<NegotiationPrivileged>((p) => [p.task.values]),
  'absolute-zero': valuesOf<AbsoluteZeroPrivileged>((p) => [p.output]),
};

/** Checks replies against the local copy's observations; counts the private values it looked for. */
class LeakCheck {
  searched = 0;
  /** The texts the agent was shown so far in the current episode. */
  private shown = '';
  constructor(private readonly env: string) {}

  /** A reset's reply: a new episode. */
  reset(reply: unknown, local: Observation, where: string): void {
    this.shown = '';
    this.reply(reply, local, where);
  }

  reply(reply: unknown, local: Observation, where: string): void {
    this.shown += `${local.text}\n`;
    const json = JSON.stringify(reply);
    const label = `${this.env} ${where}`;
    assert.doesNotMatch(json, /"privileged"\s*:/, `${label}: a privileged field crossed the wire`);
    const observation = (reply as { observation: { data?: unknown } }).observation;
    assert.deepEqual(observation.data, local.data === undefined ? undefined : structuredClone(local.data), label);
    if (local.privileged === undefined) return;
    const extract = privateValues[this.env];
    assert.ok(extract !== undefined, `${this.env} has a privileged part: list its private values in privateValues`);
    for (const { shown, wire } of extract(local.privileged)) {
      if (this.shown.includes(shown)) continue; // the env showed it to the agent in this episode
      this.searched++;
      assert.ok(JSON.stringify(local.privileged).includes(wire), `${label}: the check could not see ${shown}`);
      assert.ok(!json.includes(wire), `${label}: the reply carries ${JSON.stringify(shown.slice(0, 80))}`);
    }
  }
}

async function post(server: EnvServer, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, `${path}: ${response.status}`);
  return response.json();
}

const seeds = splitSeeds('test', 2);
const invalid = 'no tags at all';
/** First actions besides an invalid one, per env: a self-play proposal whose output (privileged) the text does not show. */
const probes: Record<string, string> = {
  'absolute-zero': '<answer>{"program": "function f(x) { return x * 7919; }", "input": 3}</answer>',
};

/** HTTP: for each seed, the stateless reset and first step (an invalid turn, and the env's probe). */
async function checkHttp(server: EnvServer, descriptor: EnvDescriptor, check: LeakCheck): Promise<void> {
  const local = descriptor.make();
  try {
    for (const seed of seeds) {
      for (const text of [invalid, probes[descriptor.name] ?? invalid]) {
        check.reset(await post(server, '/reset', { seed }), await local.reset({ seed }), `HTTP reset seed ${seed}`);
        const { observation } = await local.step({ text });
        check.reply(await post(server, '/step', { action: { text }, seed }), observation, `HTTP step seed ${seed}`);
      }
    }
  } finally {
    await local.close?.();
  }
}

/** WebSocket: the scripted expert's whole episode (acting on the local copy's observations), in lockstep. */
async function checkEpisode(server: EnvServer, descriptor: EnvDescriptor, check: LeakCheck): Promise<void> {
  const seed = at(seeds, 0, 'seeds');
  const local = descriptor.make();
  const session = await new OpenEnvClient(server.url).session();
  try {
    const expert = descriptor.expert({ seed: 0 });
    let observation = await local.reset({ seed });
    check.reset(await session.reset({ seed }), observation, 'WebSocket reset');
    for (let turn = 1; turn <= 60; turn++) {
      const action = { text: expert.act(observation) };
      const result = await local.step(action);
      check.reply(await session.step(action), result.observation, `WebSocket step ${turn}`);
      observation = result.observation;
      if (result.done || result.truncated) {
        assert.equal(result.info.success, true, `${descriptor.name}: the expert solved seed ${seed}`);
        return;
      }
    }
    assert.fail(`${descriptor.name}: the expert's episode did not end within 60 turns`);
  } finally {
    await session.close();
    await local.close?.();
  }
}

for (const descriptor of environments) {
  test(`serve-env ${descriptor.name}: no reply carries the privileged part`, { timeout: 180_000 }, async () => {
    const server = await startEnvServer({ env: () => descriptor.make(), port: 0, maxSessions: 4 });
    const check = new LeakCheck(descriptor.name);
    try {
      await checkHttp(server, descriptor, check);
      await checkEpisode(server, descriptor, check);
    } finally {
      await server.close();
    }
    if (descriptor.name in privateValues)
      assert.ok(check.searched > 0, `${descriptor.name}: no private value was looked for`);
  });
}

test('every env with private values is listed (a renamed env would silently skip its check)', () => {
  const names = new Set(environments.map((descriptor) => descriptor.name));
  assert.deepEqual(
    Object.keys(privateValues).filter((name) => !names.has(name)),
    [],
  );
});
