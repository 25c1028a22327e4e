/**
 * `npm run bench:async`: synchronous RL (async.maxStaleness 0) against asynchronous RL (k = 1, 2),
 * same task, same budget (iterations × tasks × G trajectories), same start weights, with the
 * rollouts sampled by a remote OpenAI-compatible server on loopback (bench/async-sampler-server.ts,
 * a child process: agentrl's policy server) that gets the trainer's weights after every update
 * (`onWeightsUpdated`: saveState → the server loads it). Each request is answered after a
 * per-token latency, as a GPU inference server's decode would take:
 *
 *   (a) remote   every request BENCH_TOKEN_MS per generated token
 *   (b) uneven   the same, but one task in BENCH_SLOW_EVERY is BENCH_SLOW_FACTOR× slower (a long
 *                episode: its whole group waits for it)
 *
 * Prints, per scenario and mode: wall seconds, seconds per 100 trained trajectories, mean reward of
 * the last third of the iterations, reward per wall-clock minute (the curve: reward at 1/3, 2/3 and
 * 3/3 of the sync run's wall time), staleness and drops; then the sync / async time ratios.
 *
 * Environment (defaults in brackets): BENCH_ITERATIONS [12], BENCH_TASKS [4] (per iteration),
 * BENCH_GROUP [4], BENCH_TOKEN_MS [15], BENCH_SLOW_EVERY [6], BENCH_SLOW_FACTOR [10],
 * BENCH_SCENARIOS [remote,uneven], BENCH_MODES [0,1,2]. Small budget (about a minute):
 * BENCH_ITERATIONS=3 BENCH_TASKS=2.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAIPolicy } from '../src/policy/openai-policy.ts';
import type { Policy } from '../src/policy/types.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { makeBanditEnv, warmStartedBandit } from '../src/train/bandit-test-fixture.ts';
import { runRl, type IterationMetrics, type RlConfigInput } from '../src/train/rl.ts';
import { DataFormatError } from '../src/core/errors.ts';

const numberEnv = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const iterations = numberEnv('BENCH_ITERATIONS', 12);
const tasks = numberEnv('BENCH_TASKS', 4);
const group = numberEnv('BENCH_GROUP', 4);
const tokenMs = numberEnv('BENCH_TOKEN_MS', 15);
const slowEvery = numberEnv('BENCH_SLOW_EVERY', 6);
const slowFactor = numberEnv('BENCH_SLOW_FACTOR', 10);
const scenarios = (process.env.BENCH_SCENARIOS ?? 'remote,uneven').split(',');
const modes = (process.env.BENCH_MODES ?? '0,1,2').split(',').map(Number);

const config: RlConfigInput = {
  algo: 'grpo',
  iterations,
  tasksPerIteration: tasks,
  groupSize: group,
  maxTurns: 1,
  maxNewTokens: 24,
  learningRate: 2e-3,
  minibatchSize: 8,
  klCoef: 0,
  validateEvery: 0,
  validationEpisodes: 8,
  seed: 3,
};

interface Run {
  mode: number;
  wallSeconds: number;
  trained: number;
  curve: { seconds: number; reward: number }[];
  staleness: number;
  dropped: number;
  /** Wall seconds with at least one request at the sampler. */
  samplerBusySeconds: number;
  /** Wall seconds the trainer worked: the wall time less its waits for rollouts (sync: all of the sampler's time). */
  trainerBusySeconds: number;
}

/** A stable hash of the prompt ids: the G episodes of one (single-turn) task share it. */
function taskHash(text: string): number {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0;
  return hash;
}

/** The remote policy, each request answered after its decode latency (the slow tasks' × slowFactor when uneven). */
function withLatency(remote: Policy, uneven: boolean): Policy & { busySeconds(): number } {
  let inFlight = 0;
  let busyMs = 0;
  let since = 0;
  const latency = async (request: Parameters<Policy['generate']>[0], tokens: number) => {
    const slow = uneven && slowEvery > 0 && taskHash(request.prompt.join(',')) % slowEvery === 0;
    await new Promise((resolve) => setTimeout(resolve, tokens * tokenMs * (slow ? slowFactor : 1)));
  };
  const generate = async (request: Parameters<Policy['generate']>[0]) => {
    if (inFlight++ === 0) since = performance.now();
    try {
      const generation = await remote.generate(request);
      await latency(request, generation.tokens.length);
      return generation;
    } finally {
      if (--inFlight === 0) busyMs += performance.now() - since;
    }
  };
  return {
    tokenizer: remote.tokenizer,
    contextWindow: remote.contextWindow,
    generate,
    generateBatch: (requests) => Promise.all(requests.map(generate)),
    busySeconds: () => busyMs / 1000,
  };
}

async function startSampler(statePath: string): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(join(import.meta.dirname, 'async-sampler-server.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, AGENTRL_BENCH_STATE: statePath },
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve(message.url));
    child.once('exit', (code) => reject(new DataFormatError(`the sampler server exited ${code} before it was ready`)));
  });
  return { child, url };
}

async function run(mode: number, uneven: boolean, start: Uint8Array, folder: string): Promise<Run> {
  const statePath = join(folder, 'weights.bin');
  await writeFile(statePath, start);
  const policy = await BuiltinPolicy.fromState(start);
  const { child, url } = await startSampler(statePath);
  const remote = new OpenAIPolicy({
    baseURL: `${url}/v1`,
    model: 'bench',
    contextWindow: policy.contextWindow,
    environment: {},
    concurrency: 64,
  });
  const onWeightsUpdated = async (version: number) => {
    await writeFile(statePath, await policy.saveState());
    await new Promise<void>((resolve) => {
      const loaded = (message: { type: string; version: number }) => {
        if (message.type !== 'loaded' || message.version !== version) return;
        child.off('message', loaded);
        resolve();
      };
      child.on('message', loaded);
      child.send({ type: 'weights', path: statePath, version });
    });
  };
  const started = performance.now();
  const history: IterationMetrics[] = [];
  const curve: Run['curve'] = [];
  const sampler = withLatency(remote, uneven);
  await runRl({
    policy,
    sampler,
    onWeightsUpdated,
    env: makeBanditEnv,
    config: { ...config, async: { maxStaleness: mode } },
    onWarning: () => {},
    onIteration: (metrics) => {
      history.push(metrics);
      curve.push({ seconds: (performance.now() - started) / 1000, reward: metrics.reward });
    },
  });
  const wallSeconds = (performance.now() - started) / 1000;
  child.disconnect();
  const sum = (key: string) => history.reduce((n, m) => n + (m.scalars?.[key] ?? 0), 0);
  return {
    mode,
    wallSeconds,
    trained: history.reduce((n, m) => n + m.trained, 0),
    curve,
    staleness: sum('async/staleness/mean') / history.length,
    dropped: sum('async/dropped'),
    samplerBusySeconds: sampler.busySeconds(),
    trainerBusySeconds: wallSeconds - (mode === 0 ? sampler.busySeconds() : sum('async/trainerIdleSeconds')),
  };
}

/** Mean reward of the iterations finished by `seconds` (the last 3 of them). */
function rewardBy(curve: Run['curve'], seconds: number): number {
  const done = curve.filter((point) => point.seconds <= seconds).slice(-3);
  return done.length === 0 ? Number.NaN : done.reduce((n, p) => n + p.reward, 0) / done.length;
}

const { policy: startPolicy } = await warmStartedBandit({ sftSteps: 40, demonstrations: 32 });
const start = await startPolicy.saveState();
const folder = await mkdtemp(join(tmpdir(), 'agentrl-bench-async-'));
console.log(
  `bench:async  bandit, ${iterations} iterations × ${tasks} tasks × G ${group} = ${iterations * tasks * group} trajectories per run; ` +
    `remote sampler on loopback (child process), ${tokenMs} ms/token${scenarios.includes('uneven') ? `; uneven: 1 task in ${slowEvery} ×${slowFactor}` : ''}`,
);
try {
  // One untimed run first: the sampler's and the trainer's first compiles would otherwise land on the first arm (sync).
  await run(modes[0] ?? 0, false, start, folder);
  for (const scenario of scenarios) {
    const runs: Run[] = [];
    for (const mode of modes) runs.push(await run(mode, scenario === 'uneven', start, folder));
    const sync = runs.find((r) => r.mode === 0) ?? runs[0];
    if (sync === undefined) continue;
    console.log(`\n(${scenario === 'uneven' ? 'b' : 'a'}) ${scenario}`);
    console.log(
      '  mode    wall s   s/100 traj   reward@⅓ ⅔ 1 of sync wall   last-third reward   staleness   dropped   sampler busy s   trainer busy s',
    );
    for (const r of runs) {
      const third = r.curve.slice(-Math.max(1, Math.floor(r.curve.length / 3)));
      const rewards = [1, 2, 3].map((k) => rewardBy(r.curve, (sync.wallSeconds * k) / 3).toFixed(2)).join(' ');
      const cells = [
        r.mode === 0 ? 'sync ' : `k=${r.mode}  `,
        r.wallSeconds.toFixed(1).padStart(7),
        ((r.wallSeconds / r.trained) * 100).toFixed(1).padStart(10),
        rewards.padStart(24),
        (third.reduce((n, p) => n + p.reward, 0) / third.length).toFixed(3).padStart(17),
        r.staleness.toFixed(2).padStart(9),
        String(r.dropped).padStart(7),
        r.samplerBusySeconds.toFixed(1).padStart(14),
        r.trainerBusySeconds.toFixed(1).padStart(14),
      ];
      console.log(`  ${cells.join('   ')}`);
    }
    // Overlap can at best hide the shorter side: the floor is max(sampler, trainer) of the sync run.
    const floor = Math.max(sync.samplerBusySeconds, sync.trainerBusySeconds);
    console.log(
      `  bound: sync = sampler ${sync.samplerBusySeconds.toFixed(1)} s + trainer ${sync.trainerBusySeconds.toFixed(1)} s; full overlap would take max = ${floor.toFixed(1)} s, a ratio of at most ${(sync.wallSeconds / floor).toFixed(2)}x`,
    );
    for (const r of runs.filter((x) => x !== sync))
      console.log(
        `  sync / k=${r.mode} time per 100 trajectories: ${(sync.wallSeconds / sync.trained / (r.wallSeconds / r.trained)).toFixed(2)}x`,
      );
  }
  console.log(
    '\nOn 2 cores: the sampler child and the trainer hold one core each; asynchronous RL overlaps them, so the most it can gain is sync wall / max(sampler busy, trainer busy) (the bound line): the side busy all the time bounds the ratio, and a larger k helps only while the queue runs dry during an update.',
  );
} finally {
  await rm(folder, { recursive: true, force: true });
}
