/**
 * The base model on the shaped reward's components, on the product path (onnxruntime,
 * `BuiltinPolicy`, the rollout in SmolLM2's own chat format — what bench:real trains and tests
 * with): for each prompt variant of the tool-required task, the share of episodes with a
 * well-formed calculator call (`call_format`), a call with the question's operands and operator
 * (`call_operands`), a call that evaluated to the answer (`tool_call`) and success (`solved`), on
 * test-split seeds, sampled. The components come from the env's own rubric (src/envs/calculator/
 * rewards.ts), so the probe counts exactly what the shaped training reward pays.
 *
 *   nice -n 10 node --import tsx bench/real/component-probe.ts [task/system/question …]
 *
 * A variant is `task/system/question` over bench/real/variants.ts's names (default
 * mul2x2/example/what). Env: PROBE_EPISODES (default 32), PROBE_TEMPERATURE (default 1; 0 = greedy),
 * PROBE_SHOW (first replies printed, default 4), PROBE_SMALL (e.g. 2-9: one operand from that range,
 * the curriculum's first stage).
 */
import { makeCalculator, type CalculatorOptions } from '../../src/envs/calculator/env.ts';
import { splitSeeds } from '../../src/envs/split.ts';
import { loadModelCheckpoint } from '../../src/model/model-sources.ts';
import { TransformerModel } from '../../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../../src/policy/builtin-policy.ts';
import { evaluate } from '../../src/rollout/index.ts';
import { chatConventions, probeTasks, questionTexts, systemTexts } from './variants.ts';

const episodes = Number(process.env.PROBE_EPISODES ?? 32);
const temperature = Number(process.env.PROBE_TEMPERATURE ?? 1);
const show = Number(process.env.PROBE_SHOW ?? 4);
const components = ['call_format', 'call_operands', 'tool_call', 'solved'] as const;

function smallOperand(): CalculatorOptions['smallOperand'] {
  const text = process.env.PROBE_SMALL;
  if (text === undefined) return undefined;
  const [min, max] = text.split('-').map(Number);
  return { min: min ?? 0, max: max ?? 0 };
}

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  const checkpoint = await loadModelCheckpoint('smollm2-135m-instruct');
  const format = checkpoint.chatFormat;
  if (format === undefined) throw new Error('smollm2-135m-instruct: no chat format in the pulled model');
  const model = await TransformerModel.fromParams({ ...checkpoint.config, maxSeqLen: 512 }, checkpoint.params, {
    seed: 0,
  });
  const policy = new BuiltinPolicy({ model, chatFormat: format });
  const systems = systemTexts(format);
  const questions = questionTexts(format);
  const sampling = temperature === 0 ? 'greedy' : `T=${temperature}`;
  console.log(
    `| variant (task / system / question), ${sampling}, ${episodes} test seeds | ${components.join(' | ')} | seconds |`,
  );
  console.log(`|---|${components.map(() => '---|').join('')}---|`);
  for (const name of names.length > 0 ? names : ['mul2x2/example/what']) {
    const [task = '', system = '', question = ''] = name.split('/');
    const options: CalculatorOptions = {
      ...chatConventions,
      ...probeTasks[task],
      instructions: systems[system],
      question: questions[question],
      smallOperand: smallOperand(),
    };
    if (probeTasks[task] === undefined || options.instructions === undefined || options.question === undefined)
      throw new Error(`unknown variant ${name}: task/system/question over bench/real/variants.ts`);
    const started = performance.now();
    const { trajectories } = await evaluate({
      policy,
      env: () => makeCalculator(options),
      seeds: splitSeeds('test', episodes),
      greedy: temperature === 0,
      temperature: temperature === 0 ? 1 : temperature,
      samplingSeed: 12_345,
      maxTurns: chatConventions.maxTurns,
      maxNewTokens: 48,
    });
    const share = (component: string) =>
      trajectories.filter((t) => (t.rewardComponents?.[component] ?? 0) > 0).length / trajectories.length;
    const cells = components.map((component) => `${(share(component) * 100).toFixed(0)}%`);
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    console.log(
      `| ${name}${process.env.PROBE_SMALL ? ` (one operand ${process.env.PROBE_SMALL})` : ''} | ${cells.join(' | ')} | ${seconds} |`,
    );
    for (const trajectory of trajectories.slice(0, show))
      console.log(`    ${trajectory.turns.map((turn) => JSON.stringify(turn.action.slice(0, 140))).join(' → ')}`);
  }
}

await main();
