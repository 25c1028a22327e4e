/**
 * Task design by measurement (bench/real/probe.sh): SmolLM2-135M-Instruct's base success on
 * candidate variants of the calculator task, scored by the real env (src/envs/calculator) and
 * rendered with the model's own chat format (loadChatFormat of the pulled folder; tools in its
 * system prompt, tool calls parsed in its `<tool_call>[…]` format, tool results as tool
 * messages). Sampling runs in PyTorch (bench/real/probe_generate.py) only because it is fast:
 * this is a probe for choosing the task, not the product path.
 *
 *   node --import tsx bench/real/probe.ts <python> [variant-name-prefix …]
 *
 * Env: PROBE_EPISODES (default 48) test-split seeds per variant.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ChatFormat } from '../../src/chat/chat-format.ts';
import { loadChatFormat } from '../../src/chat/model-folder.ts';
import type { Message, StepResult } from '../../src/core/types.ts';
import { makeCalculator } from '../../src/envs/calculator/env.ts';
import { splitSeeds } from '../../src/envs/split.ts';
import { pulledModelPaths } from '../../src/model/model-sources.ts';
import { toolSchema } from '../../src/policy/openai-wire.ts';
import { probeVariants, type ProbeVariant } from './variants.ts';
import { at } from '../../src/core/indexing.ts';

interface Sampler {
  generate(prompts: number[][], sampling: ProbeVariant['sampling'], seed: number): Promise<number[][]>;
  close(): void;
}

function startSampler(python: string, gguf: string): Promise<Sampler> {
  const child = spawn(python, [new URL('./probe_generate.py', import.meta.url).pathname, gguf], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> =>
    JSON.parse(String((await lines.next()).value)) as Record<string, unknown>;
  return next().then(() => ({
    async generate(prompts, sampling, seed) {
      child.stdin!.write(`${JSON.stringify({ prompts, ...sampling, seed, stop: stopTokens })}\n`);
      return (await next()).replies as number[][];
    },
    close: () => child.stdin!.end(),
  }));
}

let stopTokens: number[] = [];

interface Outcome {
  success: boolean;
  calledTool: boolean;
  rightNumber: boolean;
  turns: number;
  generatedTokens: number;
  firstReply: string;
}

/** Plays every seed's episode of one variant, turn by turn in one batch. */
async function runVariant(
  variant: ProbeVariant,
  format: ChatFormat,
  sampler: Sampler,
  seeds: number[],
): Promise<Outcome[]> {
  const episodes = await Promise.all(
    seeds.map(async (seed) => {
      const env = makeCalculator(variant.env);
      const observation = await env.reset({ seed });
      const messages: Message[] = [
        { role: 'system', content: env.instructions },
        { role: 'user', content: observation.text },
      ];
      const outcome: Outcome = {
        success: false,
        calledTool: false,
        rightNumber: false,
        turns: 0,
        generatedTokens: 0,
        firstReply: '',
      };
      return { env, messages, outcome, done: false };
    }),
  );
  const tools = [toolSchema(at(makeCalculator().tools, 0))];
  for (let turn = 0; turn < (variant.env.maxTurns ?? 4); turn++) {
    const live = episodes.filter((episode) => !episode.done);
    if (live.length === 0) break;
    const prompts = live.map((episode) => format.render(episode.messages, { tools, addGenerationPrompt: true }).tokens);
    const replies = await sampler.generate(prompts, variant.sampling, 1000 + turn);
    for (const [i, episode] of live.entries()) {
      const reply = at(replies, i);
      const text = format.tokenizer.decode(reply.filter((id) => !stopTokens.includes(id)));
      const parsed = format.parseAssistant(text);
      const call = parsed.toolCalls[0];
      episode.outcome.turns++;
      episode.outcome.generatedTokens += reply.length;
      if (turn === 0) episode.outcome.firstReply = text;
      const result: StepResult = await episode.env.step(
        call === undefined ? { text } : { text: parsed.content, toolCall: call },
      );
      if (call !== undefined) episode.outcome.calledTool = true;
      if (result.done || result.truncated) {
        episode.done = true;
        episode.outcome.success = result.info.success === true;
        episode.outcome.rightNumber =
          result.observation.text === 'correct' || result.observation.text.startsWith('wrong: no calculator');
        continue;
      }
      episode.messages.push({
        role: 'assistant',
        content: parsed.content,
        ...(call === undefined ? {} : { toolCalls: [call] }),
      });
      episode.messages.push(
        call === undefined
          ? { role: 'user', content: result.observation.text }
          : { role: 'tool', content: result.observation.text, toolCallId: call.id, name: call.name },
      );
    }
  }
  return episodes.map((episode) => episode.outcome);
}

const percent = (count: number, total: number): string => `${((100 * count) / total).toFixed(0)}%`;

async function main(): Promise<void> {
  const [python, ...prefixes] = process.argv.slice(2);
  if (python === undefined) throw new Error('usage: probe.ts <python> [variant-name-prefix …]');
  const { folder, gguf } = pulledModelPaths('smollm2-135m-instruct');
  const format = loadChatFormat(folder);
  stopTokens = [...format.stopTokens];
  const seeds = splitSeeds('test', Number(process.env.PROBE_EPISODES ?? 48));
  const sampler = await startSampler(python, gguf);
  const chosen = probeVariants(format).filter(
    (variant) => prefixes.length === 0 || prefixes.some((prefix) => variant.name.startsWith(prefix)),
  );
  console.log(`| variant | success | called the tool | right number | turns | tokens/episode | seconds |`);
  console.log(`|---|---|---|---|---|---|---|`);
  for (const variant of chosen) {
    const started = performance.now();
    const outcomes = await runVariant(variant, format, sampler, seeds);
    const seconds = (performance.now() - started) / 1000;
    const count = (pick: (outcome: Outcome) => boolean) => percent(outcomes.filter(pick).length, outcomes.length);
    const mean = (pick: (outcome: Outcome) => number) =>
      (outcomes.reduce((sum, outcome) => sum + pick(outcome), 0) / outcomes.length).toFixed(1);
    console.log(
      `| ${variant.name} | ${count((o) => o.success)} | ${count((o) => o.calledTool)} | ${count((o) => o.rightNumber)} | ${mean((o) => o.turns)} | ${mean((o) => o.generatedTokens)} | ${seconds.toFixed(0)} |`,
    );
    if (process.env.PROBE_SHOW)
      for (const outcome of outcomes.slice(0, Number(process.env.PROBE_SHOW)))
        console.log(`    ${JSON.stringify(outcome.firstReply)}`);
  }
  sampler.close();
}

await main();
