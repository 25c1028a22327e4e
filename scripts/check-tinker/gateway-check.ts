/**
 * check:tinker's gateway step: `agentrl gateway --backend tinker` in front of the Tinker server
 * (the strict server in front of SkyRL), one session driven over HTTP (a chat completion with
 * log-probs, a posted reward), SIGTERM, then the run store read back: the recorded ids and
 * log-probs are the ones the server sampled and the reply reported.
 *
 *   node --import tsx scripts/check-tinker/gateway-check.ts --base-url http://127.0.0.1:8766 --base-model <folder> --store runs.db
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RunStore } from '../../src/store/run-store.ts';

const { values } = parseArgs({
  options: { 'base-url': { type: 'string' }, 'base-model': { type: 'string' }, store: { type: 'string' } },
});
const [baseUrl, baseModel, storePath] = [values['base-url'], values['base-model'], values.store];
if (baseUrl === undefined || baseModel === undefined || storePath === undefined) {
  process.stderr.write('usage: gateway-check.ts --base-url <url> --base-model <model> --store <runs.db>\n');
  process.exit(2);
}
const failures: string[] = [];
const check = (ok: boolean, message: string): void => {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${message}\n`);
  if (!ok) failures.push(message);
};

const bin = join(import.meta.dirname, '..', '..', 'bin', 'agentrl.js');
const flags = ['--backend', 'tinker', '--base-url', baseUrl, '--base-model', baseModel, '--lora-rank', '8'];
const child = spawn(
  process.execPath,
  [bin, 'gateway', ...flags, '--port', '0', '--store', storePath, '--run-name', 'gateway', '--record-every-s', '0.5'],
  { stdio: ['ignore', 'inherit', 'pipe'] },
);
const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
let output = '';
const url = await new Promise<string | undefined>((resolve) => {
  const timer = setTimeout(() => resolve(undefined), 300_000);
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const match = /on (http:\/\/[0-9.:]+)\/v1/.exec(output);
    if (match?.[1] !== undefined) {
      clearTimeout(timer);
      resolve(match[1]);
    }
  });
  void exited.then(() => resolve(undefined));
});
let reported: number[] = [];
try {
  check(url !== undefined, `the gateway started (${output.trim().split('\n').at(-1) ?? ''})`);
  if (url !== undefined) {
    const started = performance.now();
    const reply = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-id': 'check' },
      body: JSON.stringify({
        model: 'any',
        messages: [{ role: 'user', content: 'Pick an arm: A or B.' }],
        max_tokens: 8,
        logprobs: true,
      }),
    });
    const body = (await reply.json()) as { choices?: { logprobs?: { content?: { logprob: number }[] } }[] };
    reported = body.choices?.[0]?.logprobs?.content?.map((token) => token.logprob) ?? [];
    check(
      reply.status === 200 && reported.length > 0,
      `a chat completion sampled by the Tinker server: ${reported.length} tokens with log-probs in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const posted = await fetch(`${url}/v1/sessions/check/reward`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reward: 1 }),
    });
    check(posted.status === 200, 'the reward is posted');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a few recording ticks
  }
} finally {
  child.kill('SIGTERM');
}
check((await exited) === 0, 'SIGTERM ends the gateway with exit 0 (the LoRA run unloaded)');
const store = RunStore.open(storePath, { readonly: true });
try {
  const [trajectory] = [...store.iterateTrajectories(store.run('gateway').id)];
  const recorded = trajectory?.logprobs.filter((_, i) => trajectory.lossMask[i] === 1) ?? [];
  check(
    recorded.length >= reported.length &&
      reported.every((logprob, i) => Math.abs(logprob - (recorded[i] ?? Number.NaN)) < 1e-5),
    `the run holds the session with the sampled ids' log-probs (${recorded.length} recorded, ${reported.length} reported)`,
  );
} finally {
  store.close();
}
process.stdout.write(failures.length === 0 ? 'gateway check passed\n' : `gateway check FAILED: ${failures.length}\n`);
process.exit(failures.length === 0 ? 0 : 1);
