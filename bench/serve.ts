/**
 * `npm run bench:serve`: a bounded load test of `agentrl serve-env` on loopback. The server runs
 * as its own process (`bin/agentrl.js serve-env`, as a user would start it); the clients are
 * OpenEnvClient WebSocket sessions in this process. Each session plays FrozenLake episodes
 * (cycling moves, a reset whenever one ends) until it has taken its steps. Prints steps/s,
 * per-step latency percentiles and the error count; exits 1 on any error.
 *
 * Environment variables (defaults in brackets): BENCH_SESSIONS [64], BENCH_STEPS [200] (per
 * session), BENCH_ENV [frozen-lake].
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { OpenEnvClient } from '../src/serve/openenv/client.ts';
import { at } from '../src/core/indexing.ts';

const sessions = Number(process.env.BENCH_SESSIONS ?? 64);
const stepsPerSession = Number(process.env.BENCH_STEPS ?? 200);
const envName = process.env.BENCH_ENV ?? 'frozen-lake';
const moves = ['Right', 'Down', 'Left', 'Up'];

const server = spawn(
  process.execPath,
  [
    join(import.meta.dirname, '..', 'bin', 'agentrl.js'),
    'serve-env',
    envName,
    '--port',
    '0',
    '--max-sessions',
    String(sessions),
  ],
  { stdio: ['ignore', 'inherit', 'pipe'] },
);
const url = await new Promise<string>((resolve, reject) => {
  let text = '';
  server.stderr!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    const match = /on (http:\/\/[0-9.:]+)/.exec(text);
    if (match) resolve(at(match, 1));
  });
  server.once('exit', (code) => reject(new Error(`serve-env exited ${code}: ${text}`)));
});

const client = new OpenEnvClient(url);
const latencies: number[] = [];
const errors: string[] = [];
let resets = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: sessions }, async (_, index) => {
    try {
      const session = await client.session();
      let done = true;
      for (let step = 0; step < stepsPerSession; step++) {
        if (done) {
          await session.reset({ seed: index * stepsPerSession + step });
          resets++;
        }
        const sent = performance.now();
        const result = await session.step({ text: `<answer>${moves[(index + step) % moves.length]}</answer>` });
        latencies.push(performance.now() - sent);
        done = result.done;
      }
      await session.close();
    } catch (error) {
      errors.push((error as Error).message);
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
server.kill('SIGTERM');

latencies.sort((a, b) => a - b);
const percentile = (p: number): number =>
  latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
console.log(
  `| sessions | steps/session | steps | resets | errors | wall (s) | steps/s | step p50 (ms) | step p99 (ms) |`,
);
console.log(`|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
console.log(
  `| ${sessions} | ${stepsPerSession} | ${latencies.length} | ${resets} | ${errors.length} | ${seconds.toFixed(2)} | ${Math.round(latencies.length / seconds)} | ${percentile(50).toFixed(2)} | ${percentile(99).toFixed(2)} |`,
);
if (errors.length > 0) {
  console.error(`errors (first 5): ${errors.slice(0, 5).join('; ')}`);
  process.exit(1);
}
