/**
 * `npm run check:served [-- <model>]`: does the trained behaviour survive outside the training loop
 * (issue 34 item 2)? The model — a checkpoint, a Hugging Face folder, a .gguf or a pulled model's
 * name (default `smollm2-135m-instruct`, the base: the baseline) — plays bench:real's held-out
 * calculator task twice on the same test seeds: in process (`evaluate` with a BuiltinPolicy, the
 * rollout training and bench:real's held-out test use) and served (`startPolicyServer({ model })`
 * on 127.0.0.1, the `openai` client's chat.completions with the env's tool and system text:
 * served-episode.ts) — once without stop strings in the request (what a client using tools sends;
 * a checkpoint of `agentrl train` records its training's stop strings and the server ends replies
 * after them), once with the training's (`</answer>`, `</tool_call>`) in the request. All are scored by the env's own rules: success, a
 * well-formed calculator call (`call_format`), a call that evaluated to the answer (`tool_call`).
 * Prints the rates, the seeds where a served run differs from in process with each side's replies,
 * and the peak RSS. Exit code 1 when greedy and the served run without stop strings disagrees with in
 * process on a seed's verdict (the run with the training's stop strings is reported, not judged).
 *
 * Env: BENCH_REAL_TASK / BENCH_REAL_REWARD / BENCH_REAL_CURRICULUM (the task, as bench:real reads
 * it: training-task.ts; `mul` is the tool-required task with the `callshot` prompt),
 * BENCH_REAL_TEST (test seeds, default 16), BENCH_REAL_SERVED_TEMPERATURE (default 0 = greedy;
 * above 0 both sides sample at it, in process with the rollout's sampling seed and served with a
 * request seed: different random streams, so only the rates compare). Rollout settings as
 * bench:real's: 3 turns, 48 new tokens, the system prompt on; in process stops at `</answer>` /
 * `</tool_call>` as training does.
 */
import OpenAI from 'openai';
import type { ChatFormat } from '../../src/chat/chat-format.ts';
import type { Trajectory } from '../../src/core/types.ts';
import { splitSeeds } from '../../src/envs/split.ts';
import { evaluate } from '../../src/rollout/index.ts';
import { loadServedPolicy, startPolicyServer } from '../../src/serve/openai/policy-server.ts';
import { rolloutHistoryTurns } from '../../src/train/history-turns.ts';
import { replyStopStrings } from '../../src/train/loop-config.ts';
import { rlConfigSchema } from '../../src/train/rl.ts';
import { playServed, type ServedEpisode } from './served-episode.ts';
import { makeTrainingTask, readTrainingTask, type TrainingTask } from './training-task.ts';

const source = process.argv[2] ?? 'smollm2-135m-instruct';
const seeds = splitSeeds('test', Number(process.env.BENCH_REAL_TEST ?? 16));
const temperature = Number(process.env.BENCH_REAL_SERVED_TEMPERATURE ?? 0);
if (!Number.isFinite(temperature) || temperature < 0)
  throw new Error(
    `BENCH_REAL_SERVED_TEMPERATURE must be a number >= 0, got ${process.env.BENCH_REAL_SERVED_TEMPERATURE}`,
  );
const config = rlConfigSchema.parse({
  maxTurns: 3,
  maxNewTokens: 48,
  systemPrompt: true,
  temperature: temperature || 1,
});
const samplingSeed = 12_345; // heldOutSuccess's
const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024;
const sampling = temperature === 0 ? 'greedy' : `sampled at T=${temperature}`;

/** One side's verdict per seed, in the same shape. */
interface Outcome {
  success: boolean;
  wellFormedCall: boolean;
  answerCall: boolean;
  replies: string[];
}

/** A reply as the client would see it: `call <name>(<arguments>)` for a tool call, else its text. */
function shownReply(format: ChatFormat, text: string): string {
  const parsed = format.parseAssistant(text);
  const call = parsed.toolCalls[0];
  return call === undefined
    ? parsed.content
    : `call ${call.name}(${call.argumentsJson ?? JSON.stringify(call.arguments)})${parsed.content}`;
}

function fromTrajectory(format: ChatFormat, trajectory: Trajectory): Outcome {
  return {
    success: trajectory.success,
    wellFormedCall: (trajectory.rewardComponents?.call_format ?? 0) > 0,
    answerCall: (trajectory.rewardComponents?.tool_call ?? 0) > 0,
    replies: trajectory.turns.map((turn) => shownReply(format, turn.action)),
  };
}

function fromServed(episode: ServedEpisode): Outcome {
  return {
    success: episode.success,
    wellFormedCall: (episode.rewardComponents.call_format ?? 0) > 0,
    answerCall: (episode.rewardComponents.tool_call ?? 0) > 0,
    replies: episode.replies,
  };
}

async function inProcess(): Promise<{ outcomes: Outcome[]; task: TrainingTask; format: ChatFormat }> {
  const policy = await loadServedPolicy(source);
  try {
    const format = policy.chatFormat;
    if (format === undefined) throw new Error(`${source}: no chat format; the calculator task needs the model's own`);
    const task = makeTrainingTask(format, readTrainingTask());
    const result = await evaluate({
      policy,
      env: task.testEnv,
      seeds,
      greedy: temperature === 0,
      temperature: config.temperature,
      samplingSeed,
      stopStrings: replyStopStrings(config),
      maxTurns: config.maxTurns,
      maxNewTokens: config.maxNewTokens,
      historyTurns: rolloutHistoryTurns(config.historyTurns),
      instructions: config.systemPrompt,
    });
    return { outcomes: result.trajectories.map((t) => fromTrajectory(format, t)), task, format };
  } finally {
    await policy.model.release();
  }
}

/**
 * Both served runs on one server: without stop strings in the request (what a tools client sends; the
 * server still ends replies at the checkpoint's trained stop strings when it records them) and with the training's.
 */
async function served(
  task: TrainingTask,
): Promise<{ noStop: Outcome[]; trainingStop: Outcome[]; turnEnds: readonly string[] }> {
  const server = await startPolicyServer({ model: source, modelName: 'policy', port: 0 });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const play = async (stop: string[]): Promise<Outcome[]> => {
      const outcomes: Outcome[] = [];
      for (const seed of seeds) {
        const episode = await playServed(client, task.testEnv(), seed, {
          model: 'policy',
          temperature,
          maxNewTokens: config.maxNewTokens,
          maxTurns: config.maxTurns,
          stop,
          seed: samplingSeed + seed,
        });
        outcomes.push(fromServed(episode));
      }
      return outcomes;
    };
    return {
      noStop: await play([]),
      trainingStop: await play(replyStopStrings(config)),
      turnEnds: server.turnEnds,
    };
  } finally {
    await server.close();
  }
}

function rates(outcomes: readonly Outcome[]): string {
  const count = (pick: (o: Outcome) => boolean) => outcomes.filter(pick).length;
  const of = (n: number) => `${n}/${outcomes.length} (${((n / outcomes.length) * 100).toFixed(1)}%)`;
  return `success ${of(count((o) => o.success))}, well-formed call ${of(count((o) => o.wellFormedCall))}, call giving the answer ${of(count((o) => o.answerCall))}`;
}

const verdict = (o: Outcome) =>
  `${o.success ? 'solved' : 'failed'}${o.wellFormedCall ? ', call' : ''}${o.answerCall ? ', answer call' : ''}`;

/** Prints `remote`'s rates and each seed where its verdict or replies differ from `local`'s. */
function compare(label: string, local: readonly Outcome[], remote: readonly Outcome[]): number {
  console.log(`${label}: ${rates(remote)}`);
  let sameVerdict = 0;
  let sameReplies = 0;
  seeds.forEach((seed, index) => {
    const a = local[index];
    const b = remote[index];
    if (a === undefined || b === undefined) return;
    const verdictsAgree = verdict(a) === verdict(b);
    const repliesAgree = JSON.stringify(a.replies) === JSON.stringify(b.replies);
    if (verdictsAgree) sameVerdict++;
    if (repliesAgree) sameReplies++;
    if (!verdictsAgree || !repliesAgree)
      console.log(
        `  seed ${seed}: in process ${verdict(a)} ${JSON.stringify(a.replies)}\n  ${' '.repeat(String(seed).length + 6)}served     ${verdict(b)} ${JSON.stringify(b.replies)}`,
      );
  });
  console.log(
    `  per seed vs in process: the same verdict on ${sameVerdict}/${seeds.length}, the same replies on ${sameReplies}/${seeds.length}`,
  );
  return sameVerdict;
}

async function main(): Promise<void> {
  const { outcomes: local, task } = await inProcess();
  console.log(`check:served — ${source}, task ${task.name}, ${seeds.length} test seeds, ${sampling}`);
  const remote = await served(task);
  const stops = JSON.stringify(replyStopStrings(config));
  console.log(`in process (BuiltinPolicy, rollout evaluate, stop ${stops}, ${sampling}): ${rates(local)}`);
  const agreeing = compare(
    `served (startPolicyServer + openai chat.completions with tools, no stop in the request, the server's turn ends ${JSON.stringify(remote.turnEnds)}, ${sampling})`,
    local,
    remote.noStop,
  );
  compare(`served (the same, stop ${stops} as in training, ${sampling})`, local, remote.trainingStop);
  console.log(`peak RSS ${peakRssMb().toFixed(0)} MB`);
  if (temperature === 0 && agreeing < seeds.length) {
    console.log(
      `check:served: greedy, served without stop strings and in process disagree on ${seeds.length - agreeing} seeds`,
    );
    process.exitCode = 1;
  }
}

await main();
