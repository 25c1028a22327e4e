import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { at } from '../core/indexing.ts';
import { RunStore } from '../store/run-store.ts';
import { syntheticTrajectory } from '../store/test-data.ts';
import { startDashboard } from './server.ts';

/** A store with one run of `steps` steps, four trajectories each (groups of two; index 0 and 2 succeed). */
async function withDashboard(
  steps: number,
  body: (get: (path: string) => Promise<Response>, store: RunStore) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-dashboard-api-'));
  const store = RunStore.open(join(dir, 'agentrl.db'));
  const run = store.createRun({ command: 'train', name: 'bandit-grpo-1', seed: 0, gitCommit: null, config: {} });
  for (let step = 1; step <= steps; step++) {
    const trajectories = [0, 1, 2, 3].map((index) => ({
      ...syntheticTrajectory(step, index, 8),
      groupId: `task-${step}-${index >> 1}`,
      totalReward: index % 2 === 0 ? 1 : 0,
      success: index % 2 === 0,
    }));
    store.recordStep(run.id, { step, metrics: { reward: step, trainedTokens: 4 }, trajectories });
  }
  const dashboard = await startDashboard({ store: store.path });
  try {
    await body((path) => fetch(new URL(path, dashboard.url)), store);
  } finally {
    await dashboard.close();
    store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('dashboard API: metrics as columns; after=N returns only the newer steps; maxPoints downsamples', async () => {
  await withDashboard(6, async (get) => {
    const all = (await (await get('/api/runs/bandit-grpo-1/metrics')).json()) as {
      steps: number[];
      tokens: number[];
      values: Record<string, number[]>;
      lastStep: number;
    };
    assert.deepEqual(all.steps, [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(all.values.reward, [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(all.tokens, [4, 8, 12, 16, 20, 24]);
    const newer = (await (await get('/api/runs/1/metrics?after=4')).json()) as { steps: number[]; lastStep: number };
    assert.deepEqual([newer.steps, newer.lastStep], [[5, 6], 6]);
    const coarse = (await (await get('/api/runs/1/metrics?maxPoints=3')).json()) as {
      steps: number[];
      values: Record<string, number[]>;
      bucketSize: number;
    };
    assert.deepEqual([coarse.steps, coarse.values.reward, coarse.bucketSize], [[2, 4, 6], [1.5, 3.5, 5.5], 2]);
    const bad = await get('/api/runs/1/metrics?after=soon');
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, /after="soon" must be a whole number/);
  });
});

test('dashboard API: the trajectory list is paged and filtered by step, reward and success; a group comes whole', async () => {
  await withDashboard(30, async (get) => {
    type Page = {
      total: number;
      offset: number;
      items: { step: number; index: number; groupId: string; success: boolean; totalReward: number }[];
    };
    const first = (await (await get('/api/runs/1/trajectories?limit=10')).json()) as Page;
    assert.equal(first.total, 120);
    assert.deepEqual(
      first.items.map((t) => `${t.step}/${t.index}`),
      ['1/0', '1/1', '1/2', '1/3', '2/0', '2/1', '2/2', '2/3', '3/0', '3/1'],
    );
    const third = (await (await get('/api/runs/1/trajectories?limit=10&offset=20')).json()) as Page;
    assert.deepEqual([third.offset, at(third.items, 0, 'page items').step], [20, 6]);
    const failures = (await (await get('/api/runs/1/trajectories?step=7&success=false')).json()) as Page;
    assert.deepEqual(
      failures.items.map((t) => [t.step, t.index, t.success]),
      [
        [7, 1, false],
        [7, 3, false],
      ],
    );
    const rewarded = (await (await get('/api/runs/1/trajectories?minReward=0.5&limit=500')).json()) as Page;
    assert.equal(rewarded.total, 60);
    assert.ok(rewarded.items.every((t) => t.totalReward === 1));
    const group = (await (await get('/api/runs/1/groups/7/task-7-1')).json()) as { index: number; tokens: number[] }[];
    assert.deepEqual(
      group.map((t) => t.index),
      [2, 3],
    );
    assert.equal(at(group, 0, 'group').tokens.length, 8);
    assert.equal((await get('/api/runs/1/groups/7/no-such-group')).status, 404);
  });
});

test('dashboard server: unknown pages are an HTML 404, unknown API paths a JSON 404; uPlot comes from node_modules; /runs/<name> is the page', async () => {
  await withDashboard(1, async (get) => {
    const page = await get('/no/such/page');
    assert.equal(page.status, 404);
    assert.match(page.headers.get('content-type')!, /text\/html/);
    assert.match(await page.text(), /No page here[\s\S]*<code>\/no\/such\/page<\/code>[\s\S]*href="\/"/);
    const api = await get('/api/runs/1/nothing');
    assert.equal(api.status, 404);
    assert.match(((await api.json()) as { error: string }).error, /no such API path/);
    const uplot = await get('/vendor/uPlot.esm.js');
    assert.equal(uplot.status, 200);
    assert.match(await uplot.text(), /export \{ uPlot as default \}|export default uPlot/);
    assert.equal((await get('/vendor/../package.json')).status, 404);
    const linked = await get('/runs/bandit-grpo-1');
    assert.equal(linked.status, 200);
    assert.match(await linked.text(), /<title>agentrl dashboard<\/title>/);
  });
});

test('dashboard API: a bad query value or path segment is a 400 naming it, never a 500', async () => {
  await withDashboard(3, async (get) => {
    const badRequests: [path: string, message: RegExp][] = [
      ['/api/runs/1/trajectories?offset=1e308', /offset="1e308" must be a whole number/],
      ['/api/runs/1/trajectories?offset=-1', /offset="-1" must be a whole number/],
      ['/api/runs/1/trajectories?offset=2.5', /offset="2.5"/],
      ['/api/runs/1/trajectories?offset=9007199254740993', /offset="9007199254740993" must be in/],
      ['/api/runs/1/trajectories?limit=0', /limit="0" must be in \[1, 500\]/],
      ['/api/runs/1/trajectories?limit=abc', /limit="abc"/],
      ['/api/runs/1/trajectories?limit=501', /limit="501"/],
      ['/api/runs/1/trajectories?step=1e3', /step="1e3"/],
      ['/api/runs/1/trajectories?minReward=Infinity', /minReward="Infinity" must be a finite number/],
      ['/api/runs/1/trajectories?success=yes', /success="yes"/],
      ['/api/runs/1/trajectories?limt=5', /takes no query parameter "limt"; allowed: step, group, .*limit/],
      ['/api/runs/1/metrics?after=-3', /after="-3"/],
      ['/api/runs/1/metrics?maxPoints=0', /maxPoints="0"/],
      ['/api/runs?offset=1', /\/api\/runs takes no query parameter "offset"/],
      ['/api/runs/%E0%A4%A', /malformed percent escape/],
      ['/api/runs/1/trajectories/%ZZ/0', /malformed percent escape/],
      ['/api/runs/1/trajectories/one/0', /step "one" must be a whole number/],
      ['/api/runs/1/groups/-1/task-1-0', /step "-1" must be a whole number/],
    ];
    for (const [path, message] of badRequests) {
      const answer = await get(path);
      const body = (await answer.json()) as { error: string };
      assert.equal(answer.status, 400, `${path}: ${body.error}`);
      assert.match(body.error, message, path);
    }
    const last = (await (await get('/api/runs/1/trajectories?offset=9007199254740991&limit=500')).json()) as {
      items: unknown[];
    };
    assert.deepEqual(last.items, [], 'the largest offset is an empty page');
    const empty = await get('/api/runs/1/trajectories?step=&minReward=&offset=');
    assert.equal(empty.status, 200, 'an empty value is an absent one');
  });
});

test('dashboard server: a malformed request target is a 400', async () => {
  await withDashboard(1, async (get) => {
    const origin = new URL((await get('/')).url);
    const malformed = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(origin.port), '127.0.0.1', () =>
        socket.end('GET http://[bad/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(malformed, /^HTTP\/1\.1 400 /);
  });
});
