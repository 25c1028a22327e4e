/**
 * `npm run bench:multi-agent`: negotiation with a policy per role (issue 33) against the shared-
 * policy control, same start, algorithm and budget. Two models (BENCH_MODEL):
 *
 *   builtin (default)  the built-in byte model (BENCH_HIDDEN × BENCH_LAYERS), warm-started by SFT on
 *                      the scripted expert (BENCH_SFT_STEPS); each role a full copy of the warm start
 *   smollm2            SmolLM2-135M-Instruct (the pulled model, `agentrl models`) with LoRA rank 16
 *                      on all seven projections, warm-started by SFT of the adapters on the scripted
 *                      expert (BENCH_SFT_STEPS): each role its own copy of those adapters over ONE
 *                      base (forkAdapters), the env's instructions as the system message, in the model's chat format
 *
 * Then each arm trains for BENCH_ITERATIONS iterations:
 *
 *   per-role           Alice and Bob as two copies of the start, each trained on its own turns
 *   per-role + league  the same, with a league of past selves (snapshot every BENCH_LEAGUE_EVERY)
 *   shared (control)   ONE copy plays both roles and is trained on both roles' turns
 *
 * Every arm's rewards are each agent's own value of the deal / 10 (--role-reward own) with
 * per-role group baselines. Measured for each trained role, before → after, on held-out test
 * seeds, against two fixed opponents in the other role: the scripted expert (cooperative: it
 * proposes and accepts only joint-optimal splits) and the initial policy (the start):
 * the role's mean reward, its win rate (its reward above the opponent's; a tie ½) and the deal rate.
 * Prints the process's peak RSS after each arm.
 *
 * Env: BENCH_MODEL [builtin | smollm2], BENCH_ITERATIONS [20], BENCH_TASKS [8 tasks per iteration],
 * BENCH_GROUP [4], BENCH_TEST [64 test seeds], BENCH_LR [1e-4 builtin, 2e-4 smollm2], BENCH_SEED [0],
 * BENCH_ARMS [builtin: per-role,league,shared; smollm2: per-role,shared], BENCH_LEAGUE_EVERY [5];
 * BENCH_SFT_STEPS [builtin 150, smollm2 16]; builtin only: BENCH_HIDDEN [128], BENCH_LAYERS [4].
 */
import { makeNegotiation } from '../src/envs/negotiation/env.ts';
import { negotiationExpert } from '../src/envs/negotiation/expert.ts';
import { negotiationRoles } from '../src/envs/negotiation/roles.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';
import { loadModelCheckpoint } from '../src/model/model-sources.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import type { Policy } from '../src/policy/types.ts';
import type { RolePlayer } from '../src/rollout/multi-agent-rollout.ts';
import { evaluateRoles, type RoleEvaluation } from '../src/train/multi-agent/role-evaluation.ts';
import { runMultiAgentRl } from '../src/train/multi-agent/run-multi-agent-rl.ts';
import { warmStart, warmStartConfigSchema } from '../src/train/warm-start.ts';

const numberFrom = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const modelName = process.env.BENCH_MODEL ?? 'builtin';
if (modelName !== 'builtin' && modelName !== 'smollm2')
  throw new Error(`BENCH_MODEL must be builtin or smollm2, got ${modelName}`);
const smol = modelName === 'smollm2';
const iterations = numberFrom('BENCH_ITERATIONS', 20);
const testEpisodes = numberFrom('BENCH_TEST', 64);
const seed = numberFrom('BENCH_SEED', 0);
const leagueEvery = numberFrom('BENCH_LEAGUE_EVERY', 5);
const arms = (process.env.BENCH_ARMS ?? (smol ? 'per-role,shared' : 'per-role,league,shared')).split(',');
const maxTurns = 4;
const maxNewTokens = 32;
const env = () => makeNegotiation({ maxTurns, formatPenalty: 0.1 });
const roles = negotiationRoles({ reward: 'own' });
const expert: RolePlayer = { expert: ({ seed: s }) => negotiationExpert({ seed: s }) };
const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024;

/** How the arms' policies are made: each call a fresh copy of the start (its own adapters under LoRA). */
interface Start {
  label: string;
  copy: (copySeed: number) => Promise<BuiltinPolicy>;
  /** A snapshot's saved state as a frozen policy (the league). */
  restore: (state: Uint8Array) => Promise<BuiltinPolicy>;
  /** The env's instructions as the system message. */
  instructions: boolean;
  learningRate: number;
}

/** The built-in byte model, warm-started by SFT on the scripted expert. */
async function builtinStart(): Promise<Start> {
  const hidden = numberFrom('BENCH_HIDDEN', 128);
  const modelConfig = {
    vocabSize: 272,
    hiddenSize: hidden,
    numLayers: numberFrom('BENCH_LAYERS', 4),
    numHeads: 4,
    numKvHeads: 4,
    intermediateSize: 4 * hidden,
    maxSeqLen: 384,
  };
  const started = performance.now();
  const model = await TransformerModel.create(modelConfig, { seed });
  const warm = await warmStart({
    policy: new BuiltinPolicy({ model }),
    env,
    expert: (s, randomActionRate) => negotiationExpert({ seed: s, randomActionRate }),
    config: warmStartConfigSchema.parse({ sftSteps: numberFrom('BENCH_SFT_STEPS', 150), randomActionRate: 0.3 }),
    maxTurns,
    maxNewTokens,
    instructions: false,
  });
  const warmParams = await model.hostParams();
  console.error(
    `negotiation: warm start ${((performance.now() - started) / 60_000).toFixed(1)} min, SFT loss ${warm.finalLoss.toFixed(3)}`,
  );
  return {
    label: `built-in ${modelConfig.numLayers}×${modelConfig.hiddenSize} byte model`,
    copy: async () => new BuiltinPolicy({ model: await TransformerModel.fromParams(modelConfig, warmParams) }),
    restore: (state) => BuiltinPolicy.fromState(state),
    instructions: false,
    learningRate: numberFrom('BENCH_LR', 1e-4),
  };
}

/**
 * SmolLM2's warm start (BENCH_SFT_STEPS, 0 = none): SFT of its adapters on the scripted expert's
 * episodes, in its chat format with the env's instructions, so it replies in the env's action format;
 * returns the adapters every copy starts from. Untrained, it answered every turn invalidly: every
 * reward of a group equal, no advantage, nothing to learn from.
 */
async function smolWarmStart(policy: BuiltinPolicy) {
  const sftSteps = numberFrom('BENCH_SFT_STEPS', 16);
  if (sftSteps === 0) return await policy.model.adapterParams();
  const started = performance.now();
  const warm = await warmStart({
    policy,
    env,
    expert: (s, randomActionRate) => negotiationExpert({ seed: s, randomActionRate }),
    config: warmStartConfigSchema.parse({
      demonstrations: 64,
      sftSteps,
      sftBatchSize: 8,
      sftLearningRate: 3e-3,
      randomActionRate: 0.3,
    }),
    maxTurns,
    maxNewTokens,
    instructions: true,
    onProgress: (p) => console.error(`warm start step ${p.step}: loss ${p.loss.toFixed(3)}`),
  });
  console.error(
    `negotiation: warm start ${((performance.now() - started) / 60_000).toFixed(1)} min, SFT loss ${warm.finalLoss.toFixed(3)}`,
  );
  return await policy.model.adapterParams();
}

/** SmolLM2-135M-Instruct with LoRA: every copy its own adapters over ONE base (forkAdapters), from the warm start's. */
async function smolStart(): Promise<Start> {
  const checkpoint = await loadModelCheckpoint('smollm2-135m-instruct');
  const { chatFormat } = checkpoint;
  if (chatFormat === undefined) throw new Error('smollm2-135m-instruct: no chat format in the pulled model');
  const modelConfig = { ...checkpoint.config, maxSeqLen: 768 };
  const lora = {
    rank: 16,
    alpha: 32,
    targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const,
  };
  // One LoRA model holds the base; every copy is a fork of it (the same base arrays and generation session).
  const parent = await TransformerModel.fromParams(modelConfig, checkpoint.params, {
    lora: { ...lora, targetModules: [...lora.targetModules] },
    seed: 0,
  });
  const adapters = await smolWarmStart(new BuiltinPolicy({ model: parent, chatFormat }));
  const copy = async (copySeed: number) =>
    new BuiltinPolicy({ model: await parent.forkAdapters({ seed: copySeed, adapters }), chatFormat });
  const restore = async (state: Uint8Array) => {
    const policy = await copy(0);
    await policy.loadState(state);
    return policy;
  };
  return {
    label: 'SmolLM2-135M-Instruct, LoRA rank 16 per role',
    copy,
    restore,
    instructions: true,
    learningRate: numberFrom('BENCH_LR', 2e-4),
  };
}

const start = smol ? await smolStart() : await builtinStart();
const initial = await start.copy(0);

/** Each role of `players` against the scripted expert and against the initial policy, on the test seeds. */
async function measure(players: Record<string, Policy>): Promise<Record<string, Record<string, RoleEvaluation>>> {
  const live = Object.fromEntries(Object.entries(players).map(([role, policy]) => [role, { policy }]));
  const common = {
    env,
    roles,
    live,
    split: 'test' as const,
    episodes: testEpisodes,
    maxTurns,
    maxNewTokens,
    temperature: 1,
    instructions: start.instructions,
  };
  return {
    expert: await evaluateRoles({ ...common, opponents: { alice: expert, bob: expert } }),
    initial: await evaluateRoles({ ...common, opponents: { alice: { policy: initial }, bob: { policy: initial } } }),
  };
}

const before = await measure({ alice: initial, bob: initial });
const rows: string[] = [];
const cell = (b: number, a: number, percent: boolean) =>
  percent ? `${(b * 100).toFixed(1)}% → ${(a * 100).toFixed(1)}%` : `${b.toFixed(3)} → ${a.toFixed(3)}`;
for (const arm of arms) {
  const t0 = performance.now();
  const shared = arm === 'shared' ? await start.copy(1) : undefined;
  const alice = shared ?? (await start.copy(1));
  const bob = shared ?? (await start.copy(2));
  await runMultiAgentRl({
    env,
    roles,
    players: { alice: { policy: alice }, bob: { policy: bob } },
    config: {
      algo: 'grpo',
      klCoef: 0,
      iterations,
      tasksPerIteration: numberFrom('BENCH_TASKS', 8),
      groupSize: numberFrom('BENCH_GROUP', 4),
      maxTurns,
      maxNewTokens,
      learningRate: start.learningRate,
      minibatchSize: 16,
      validateEvery: 0,
      validationEpisodes: 8,
      systemPrompt: start.instructions,
      historyTurns: 'all',
      seed,
    },
    ...(arm === 'league'
      ? {
          league: { snapshotEvery: leagueEvery },
          restoreSnapshot: start.restore,
        }
      : {}),
    onIteration: (m) => {
      const s = m.scalars ?? {};
      console.error(
        `${arm} ${m.iteration}/${iterations}: alice ${(s['role/alice/reward'] ?? NaN).toFixed(3)} bob ${(s['role/bob/reward'] ?? NaN).toFixed(3)} deal ${(m.success * 100).toFixed(0)}%`,
      );
    },
  });
  const after = await measure({ alice, bob });
  console.error(
    `${arm}: optimizer steps alice ${alice.model.step}, bob ${bob.model.step}; peak RSS ${peakRssMb().toFixed(0)} MB`,
  );
  const minutes = ((performance.now() - t0) / 60_000).toFixed(1);
  for (const role of ['alice', 'bob']) {
    const [bx, ax, bi, ai] = [
      before.expert?.[role],
      after.expert?.[role],
      before.initial?.[role],
      after.initial?.[role],
    ];
    if (bx === undefined || ax === undefined || bi === undefined || ai === undefined) continue;
    rows.push(
      `| ${arm === 'league' ? 'per-role + league' : arm === 'shared' ? 'shared (control)' : arm} | ${role} | ${cell(bx.reward, ax.reward, false)} | ${cell(bx.winRate, ax.winRate, true)} | ${cell(bx.success, ax.success, true)} | ${cell(bi.reward, ai.reward, false)} | ${cell(bi.winRate, ai.winRate, true)} | ${minutes} |`,
    );
  }
}
console.log(
  `\nnegotiation, ${start.label}, grpo, ${iterations} iterations, ${testEpisodes} held-out test seeds, seed ${seed}; peak RSS ${peakRssMb().toFixed(0)} MB\n`,
);
console.log(
  '| arm | role | vs expert: reward | vs expert: win rate | vs expert: joint-optimal deal | vs initial: reward | vs initial: win rate | minutes |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
