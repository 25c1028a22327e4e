/**
 * Issue 27, point 2, over real HTTP: a session belongs to the client that opened it (a second
 * client naming the same id is refused), a posted reward is finite, inside the gateway's range and
 * set once, and an agent run by gatewayCollect cannot name another run's session.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { InvalidArgumentError } from '../../core/errors.ts';
import { gatewayCollect } from './gateway-collect.ts';
import { startGateway, type Gateway } from './gateway.ts';
import { lastUser, sampler } from './scripted-sampler-fixture.ts';

type OpenAiErrorJson = { error: { message: string; type: string; param: string | null; code: string | null } };

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: OpenAiErrorJson & Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as OpenAiErrorJson & Record<string, unknown>,
  };
}

function assertRefused(answer: { status: number; json: OpenAiErrorJson }, status: number, code: string): void {
  assert.equal(answer.status, status, JSON.stringify(answer.json));
  assert.deepEqual(Object.keys(answer.json.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(answer.json.error.code, code, answer.json.error.message);
}

const chat = (content: string) => ({ model: 'm', messages: [{ role: 'user' as const, content }] });

describe('gateway sessions belong to the client that opened them', () => {
  let gateway: Gateway;
  before(async () => {
    gateway = await startGateway({ sampler: sampler((context) => `echo ${lastUser(context)}`) });
  });
  after(() => gateway.close());

  test('a second client naming the same session (header, model or user) is refused; the owner goes on', async () => {
    const client = (apiKey: string) =>
      new OpenAI({ baseURL: gateway.baseURL, apiKey, defaultHeaders: { 'x-session-id': 'shared' }, maxRetries: 0 });
    const alice = client('alice-key');
    await alice.chat.completions.create(chat('alice 1'));
    const refused = (error: unknown) => error instanceof OpenAI.APIError && error.status === 403;
    await assert.rejects(client('mallory-key').chat.completions.create(chat('mallory')), refused);
    const plain = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'mallory-key', maxRetries: 0 });
    await assert.rejects(plain.chat.completions.create({ ...chat('by model'), model: 'agentrl/shared' }), refused);
    await assert.rejects(plain.chat.completions.create({ ...chat('by user'), user: 'shared' }), refused);
    const keyless = await post(`${gateway.baseURL}/chat/completions`, chat('no key'), { 'x-session-id': 'shared' });
    assertRefused(keyless, 403, 'session_not_owned');
    assert.match(keyless.json.error.message, /x-session-secret/);
    await alice.chat.completions.create(chat('alice 2'));
    const finished = gateway.finishSession('shared');
    assert.deepEqual(
      finished?.calls.map((call) => call.content),
      ['echo alice 1', 'echo alice 2'],
    );
  });

  test('a client that sent no key is answered a secret; later calls need it (header or API key)', async () => {
    const url = `${gateway.baseURL}/chat/completions`;
    const first = await post(url, chat('one'), { 'x-session-id': 'keyless' });
    assert.equal(first.status, 200);
    const secret = first.headers.get('x-session-secret') ?? '';
    assert.ok(secret.length >= 43, `a 256-bit secret: ${secret}`);
    assertRefused(await post(url, chat('two'), { 'x-session-id': 'keyless' }), 403, 'session_not_owned');
    assertRefused(
      await post(url, chat('two'), { 'x-session-id': 'keyless', 'x-session-secret': 'guess' }),
      403,
      'session_not_owned',
    );
    assert.equal((await post(url, chat('two'), { 'x-session-id': 'keyless', 'x-session-secret': secret })).status, 200);
    const viaKey = new OpenAI({
      baseURL: gateway.baseURL,
      apiKey: secret,
      defaultHeaders: { 'x-session-id': 'keyless' },
    });
    await viaKey.chat.completions.create(chat('three'));
    assert.equal(gateway.finishSession('keyless')?.calls.length, 3);
    const other = await post(url, chat('one'), { 'x-session-id': 'keyless-2' });
    assert.notEqual(other.headers.get('x-session-secret'), secret, 'each session its own secret');
    const failed = await post(url, { model: 'm', messages: [] }, { 'x-session-id': 'keyless-3' });
    assert.equal(failed.status, 400);
    assert.equal(
      (await fetch(`${gateway.baseURL}/sessions/keyless-3`)).status,
      404,
      'a failed first call opens nothing',
    );
  });
});

describe('posted rewards: finite, in range, set once', () => {
  let gateway: Gateway;
  before(async () => {
    gateway = await startGateway({ sampler: sampler(() => 'ok') });
  });
  after(() => gateway.close());

  test('1e308, 1e309 (Infinity), NaN, a string or nothing are 400s; the default range is [-1e6, 1e6]', async () => {
    const owner = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', defaultHeaders: { 'x-session-id': 'bounded' } });
    await owner.chat.completions.create(chat('x'));
    const url = `${gateway.baseURL}/sessions/bounded/reward`;
    for (const body of [
      '{"reward": 1e308}',
      '{"reward": -1e7}',
      '{"reward": 1e309}',
      '{"reward": NaN}',
      '{"reward": "1"}',
      '{}',
    ]) {
      const answer = await post(url, body);
      assert.equal(answer.status, 400, `${body}: ${JSON.stringify(answer.json)}`);
    }
    const outOfRange = await post(url, { reward: 1e308 });
    assert.equal(outOfRange.json.error.param, 'reward');
    assert.match(outOfRange.json.error.message, /\[-1000000, 1000000\]/);
    assert.equal(gateway.takeRewardedSessions().length, 0, 'nothing was scored');
    assert.equal((await post(url, { reward: 1e6 })).status, 200);
    assert.deepEqual(
      gateway.takeRewardedSessions().map((session) => session.reward?.reward),
      [1e6],
    );
  });

  test('a second reward is a 409; a wrong secret is a 403; the owner may change its score', async () => {
    const owner = new OpenAI({
      baseURL: gateway.baseURL,
      apiKey: 'owner-key',
      defaultHeaders: { 'x-session-id': 'once' },
    });
    await owner.chat.completions.create(chat('x'));
    const url = `${gateway.baseURL}/sessions/once/reward`;
    assert.equal((await post(url, { reward: 0.5 })).status, 200);
    assertRefused(await post(url, { reward: 1 }), 409, 'reward_already_set');
    assertRefused(await post(url, { reward: 1 }, { authorization: 'Bearer mallory' }), 403, 'session_not_owned');
    const changed = await post(url, { reward: -1, success: false }, { authorization: 'Bearer owner-key' });
    assert.equal(changed.status, 200);
    assert.deepEqual(
      gateway.takeRewardedSessions().map((session) => [session.id, session.reward]),
      [['once', { reward: -1, success: false }]],
    );
  });

  test('rewardRange is a gateway option: posts outside it are refused; a bad range fails at start', async () => {
    const unit = await startGateway({ sampler: sampler(() => 'ok'), rewardRange: { min: 0, max: 1 } });
    try {
      await post(`${unit.baseURL}/chat/completions`, chat('x'), { 'x-session-id': 'unit', authorization: 'Bearer k' });
      const answer = await post(`${unit.baseURL}/sessions/unit/reward`, { reward: 2 });
      assertRefused(answer, 400, 'invalid_reward');
      assert.match(answer.json.error.message, /\[0, 1\]/);
      assert.equal((await post(`${unit.baseURL}/sessions/unit/reward`, { reward: 1 })).status, 200);
    } finally {
      await unit.close();
    }
    for (const rewardRange of [{ min: 1, max: 0 }, { min: Number.NEGATIVE_INFINITY }, { max: Number.NaN }])
      await assert.rejects(startGateway({ sampler: sampler(() => 'ok'), rewardRange }), InvalidArgumentError);
  });
});

describe('gatewayCollect session ids are not predictable from an agent own id', () => {
  test("an agent that derives its siblings' session ids from its own reaches none of them", async () => {
    const gateway = await startGateway({ sampler: sampler((context) => `echo ${lastUser(context)}`) });
    const ids: string[] = [];
    const seen: string[][] = [];
    try {
      const collect = gatewayCollect({
        gateway,
        agent: async (run) => {
          ids.push(run.sessionId);
          const client = (id: string) =>
            new OpenAI({ baseURL: run.baseURL, apiKey: run.apiKey, defaultHeaders: { 'x-session-id': id } });
          if (run.sample === 0)
            for (const sibling of ['1', '2']) // the sample number last (as ids were) or after the seed
              for (const guessed of [
                run.sessionId.replace(/\d+$/, sibling),
                run.sessionId.replace(/^(\d+)-0-/, `$1-${sibling}-`),
              ].filter((id) => id !== run.sessionId))
                await client(guessed).chat.completions.create(chat('injected'));
          await client(run.sessionId).chat.completions.create(chat(`own ${run.sample}`));
          return run.sample;
        },
        reward: ({ messages, sample }) => {
          seen[sample] = messages
            .filter((message) => message.role === 'user')
            .map((message) => String(message.content));
          return 1;
        },
      });
      const config = { groupSize: 3, temperature: 1, maxNewTokens: 8 };
      const trajectories = await collect({ seeds: [5], iteration: 1, config });
      assert.deepEqual(
        trajectories.map((trajectory) => trajectory.turns.length),
        [1, 1, 1],
        'one call each: nothing injected',
      );
      assert.deepEqual(seen, [['own 0'], ['own 1'], ['own 2']]);
      for (const id of ids) assert.match(id, /^5-[0-2]-[A-Za-z0-9_-]{22}$/, '128 random bits');
    } finally {
      await gateway.close();
    }
  });
});
