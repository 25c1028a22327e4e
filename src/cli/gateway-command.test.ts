/**
 * `agentrl gateway <checkpoint>` end to end: the real CLI on a free port, two sessions driven with
 * the `openai` SDK and scored through POST /v1/sessions/{id}/reward, a third left to time out,
 * SIGTERM, then the run store read back (trajectories, counters, status) and `agentrl export`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { at, entry } from '../core/indexing.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { RunStore } from '../store/run-store.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'agentrl.js');

function exitOf(child: ReturnType<typeof spawn>): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** What each driven session's replies said: tokens per call and the log-probs of each call's ids. */
type SessionReplies = Record<string, { completionTokens: number[]; logprobs: number[][] }>;

/** `agentrl gateway` on a free port with a 1 s session timeout; resolves with its URL once it prints it. */
async function startGatewayCli(dir: string, storePath: string) {
  const model = await TransformerModel.create(
    { hiddenSize: 16, numLayers: 1, numHeads: 2, numKvHeads: 2, intermediateSize: 32, maxSeqLen: 256 },
    { seed: 2 },
  );
  await saveCheckpoint(join(dir, 'policy'), { config: model.config, params: await model.hostParams() });
  const log = { output: '' };
  const gateway = spawn(
    process.execPath,
    [
      bin,
      'gateway',
      join(dir, 'policy'),
      '--port',
      '0',
      '--store',
      storePath,
      '--run-name',
      'gw',
      '--session-timeout-s',
      '1',
      '--record-every-s',
      '0.2',
      '--reward-max',
      '1',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = exitOf(gateway);
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within 60 s: ${log.output}`)), 60_000);
    gateway.stderr!.on('data', (chunk: Buffer) => {
      log.output += chunk.toString();
      const match = /on (http:\/\/[0-9.:]+)\/v1/.exec(log.output);
      if (match) {
        clearTimeout(timer);
        resolve(at(match, 1));
      }
    });
    gateway.stdout!.on('data', (chunk: Buffer) => (log.output += chunk.toString()));
    void exited.then((code) => reject(new Error(`exited ${code}: ${log.output}`)));
  });
  return { gateway, exited, url, log };
}

/** alice (2 calls, reward 1) and bob (1 call, reward 0.25) through the `openai` SDK, then an idle session left to time out. */
async function driveSessions(url: string): Promise<SessionReplies> {
  const replies: SessionReplies = {};
  for (const [session, turns, reward] of [
    ['alice', 2, 1],
    ['bob', 1, 0.25],
  ] as const) {
    const client = new OpenAI({
      baseURL: `${url}/v1`,
      apiKey: 'unused',
      defaultHeaders: { 'x-session-id': session },
      maxRetries: 0,
    });
    const messages: OpenAI.ChatCompletionMessageParam[] = [];
    const sessionReplies: SessionReplies[string] = { completionTokens: [], logprobs: [] };
    replies[session] = sessionReplies;
    for (let turn = 0; turn < turns; turn++) {
      messages.push({ role: 'user', content: `${session} ${turn}` });
      const completion = await client.chat.completions.create({
        model: 'any',
        messages,
        max_tokens: 6,
        temperature: 1,
        logprobs: true,
      });
      const choice = at(completion.choices, 0);
      messages.push({ role: 'assistant', content: choice.message.content ?? '' });
      sessionReplies.completionTokens.push(completion.usage!.completion_tokens);
      sessionReplies.logprobs.push(choice.logprobs!.content!.map((token) => token.logprob));
    }
    const post = (value: number) =>
      fetch(`${url}/v1/sessions/${session}/reward`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reward: value }),
      });
    assert.equal((await post(reward + 10)).status, 400, '--reward-max 1 refuses a reward over 1');
    assert.equal((await post(reward)).status, 200);
  }
  const idle = new OpenAI({
    baseURL: `${url}/v1`,
    apiKey: 'unused',
    defaultHeaders: { 'x-session-id': 'idle' },
    maxRetries: 0,
  });
  await idle.chat.completions.create({
    model: 'any',
    messages: [{ role: 'user', content: 'then nothing' }],
    max_tokens: 4,
  });
  await new Promise((resolve) => setTimeout(resolve, 2500)); // past the 1 s timeout and a few recording ticks
  return replies;
}

/** The run the gateway stored: completed by SIGTERM, alice's and bob's trajectories as sampled, the idle one counted as timed out. */
function checkRecordedRun(storePath: string, replies: SessionReplies): void {
  const store = RunStore.open(storePath, { readonly: true });
  try {
    const run = store.run('gw');
    assert.equal(run.command, 'gateway');
    assert.equal(run.status, 'completed');
    assert.match(run.statusReason ?? '', /SIGTERM/);
    assert.equal(store.lockHolder(run.id), undefined, 'the lock is released');
    const trajectories = [...store.iterateTrajectories(run.id)];
    const bySession = new Map(trajectories.map((t) => [t.groupId, t]));
    assert.deepEqual([...bySession.keys()].sort(), ['alice', 'bob']);
    for (const [session, reward] of [
      ['alice', 1],
      ['bob', 0.25],
    ] as const) {
      const recorded = bySession.get(session)!;
      const { completionTokens, logprobs } = entry(replies, session, 'sessions');
      assert.equal(recorded.totalReward, reward);
      assert.equal(
        recorded.lossMask.filter((m) => m === 1).length,
        completionTokens.reduce((a, b) => a + b, 0),
        `${session}: every sampled id is trained on`,
      );
      assert.equal(recorded.turns.length, completionTokens.length);
      recorded.turns.forEach((turn, k) => {
        // The reply's logprobs list every sampled id but a final stop id; the record has them all.
        const replied = at(logprobs, k);
        const stored = recorded.logprobs.slice(turn.start, turn.start + replied.length);
        stored.forEach((logprob, i) => {
          assert.ok(
            Math.abs(logprob - at(replied, i)) < 1e-6,
            `${session} turn ${k} token ${i}: ${logprob} vs ${replied[i]}`,
          );
        });
      });
      assert.equal(recorded.messages.at(-1)?.role, 'assistant');
      assert.equal(recorded.messages.filter((m) => m.role === 'user').length, completionTokens.length);
    }
    const metrics = store.metrics(run.id);
    const last = at(metrics, metrics.length - 1).values;
    assert.equal(last.sessionsFinished, 2);
    assert.equal(last.sessionsTimedOut, 1);
    assert.equal(last.calls, 4);
    // A random model's reply may hold bytes that are not UTF-8, which do not re-render to the sampled ids: alice's second call may break.
    assert.ok(last.prefixBreaks === 0 || last.prefixBreaks === 1, `prefixBreaks ${last.prefixBreaks}`);
    assert.equal(last.sessionsDropped, 0);
  } finally {
    store.close();
  }
}

test('agentrl gateway records rewarded sessions as a run; timed-out ones are dropped and counted; SIGTERM closes it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-cli-gateway-'));
  const storePath = join(dir, 'runs.db');
  const { gateway, exited, url, log } = await startGatewayCli(dir, storePath);
  let replies: SessionReplies;
  try {
    replies = await driveSessions(await url);
  } finally {
    gateway.kill('SIGTERM');
  }
  try {
    assert.equal(await exited, 0, log.output);
    checkRecordedRun(storePath, replies);
    const exported = spawn(
      process.execPath,
      [bin, 'export', 'gw', '--store', storePath, '--format', 'parquet', '--out', join(dir, 'gw.parquet')],
      { stdio: 'ignore' },
    );
    assert.equal(await exitOf(exported), 0);
    assert.ok((await stat(join(dir, 'gw.parquet'))).size > 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
