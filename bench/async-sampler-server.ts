/**
 * The remote sampler of `npm run bench:async`, a child process: agentrl's OpenAI-compatible policy
 * server (serve-policy's app) over a built-in policy restored from `AGENTRL_BENCH_STATE`, on a free
 * loopback port. The parent trainer hands it new weights over IPC — `{ type: 'weights', path,
 * version }` loads the saved state (as vLLM's update_weights_from_disk) and answers
 * `{ type: 'loaded', version }` — so sampler and trainer run on separate cores.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from '../src/core/errors.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { startPolicyServer } from '../src/serve/openai/policy-server.ts';

const statePath = process.env.AGENTRL_BENCH_STATE;
if (statePath === undefined || process.send === undefined)
  throw new InvalidArgumentError('run by bench/async.ts: AGENTRL_BENCH_STATE and an IPC channel are required');
const send = process.send.bind(process);
const policy = await BuiltinPolicy.fromState(await readFile(statePath));
const server = await startPolicyServer({
  policy,
  modelName: 'bench',
  port: 0,
  batchWindowMs: 5,
});
process.on('message', async (message: { type: string; path: string; version: number }) => {
  if (message.type !== 'weights') return;
  await policy.loadState(await readFile(message.path));
  send({ type: 'loaded', version: message.version });
});
process.on('disconnect', () => {
  void server.close().then(() => process.exit(0));
});
send({ type: 'ready', url: server.url });
