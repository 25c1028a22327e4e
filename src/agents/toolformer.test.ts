import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { evaluateExpression } from '../envs/calculator/evaluate.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { heldOutLoss, runSft } from '../train/sft.ts';
import {
  annotate,
  apiCallText,
  lossWeights,
  toolformerExamples,
  weightedLoss,
  writeAnnotatedCorpus,
  type CandidateCall,
  type ToolformerTool,
} from './toolformer.ts';
import { at } from '../core/indexing.ts';

const calculator: ToolformerTool = { name: 'Calculator', execute: (input) => evaluateExpression(input) };

/**
 * A language model we control, as log p(token | prefix):
 * - " [" (the call marker) is likely after "had" (0.61 · 0.6), less after "bought", rare elsewhere;
 * - a digit costs log 0.1, unless the digits written so far plus it begin a number that an earlier
 *   call returned (`→ 42]`: −0.1) or that an earlier call had in its input (`(42 + 0)`: −0.5);
 * - any other character costs 0.5.
 */
function logprobOf(before: string, character: string): number {
  if (character === '[') return Math.log(before.endsWith('had ') ? 0.6 : before.endsWith('bought ') ? 0.3 : 0.01);
  if (!/\d/.test(character)) return -0.5;
  const run = (/\d*$/.exec(before)?.[0] ?? '') + character;
  const results = [...before.matchAll(/→ (-?\d+)\]/g)].map((match) => at(match, 1));
  if (results.some((number) => number.startsWith(run))) return -0.1;
  const inputs = [...before.matchAll(/\(([^)]*)\)/g)].flatMap((match) => at(match, 1).match(/\d+/g) ?? []);
  if (inputs.some((number) => number.startsWith(run))) return -0.5;
  return Math.log(0.1);
}

async function controlledScore(sequences: number[][]): Promise<Float32Array[]> {
  return sequences.map((sequence) => {
    const out = new Float32Array(sequence.length);
    for (let t = 1; t < sequence.length; t++)
      out[t] = logprobOf(
        byteTokenizer.decode(sequence.slice(0, t), { skipSpecialTokens: true }),
        byteTokenizer.decode([at(sequence, t)]),
      );
    return out;
  });
}

/** Proposes calls by the text before the call (replies cycle per position). */
function callSampler(): ScriptedPolicy {
  const asked = new Map<string, number>();
  const proposals: [string, string[]][] = [
    ['Tom had [Calculator(', ['6 * 2)', '6 * 2)', '6 * 2)']],
    ['bought [Calculator(', ['30 apples)', 'thirty', '30 apples)']],
    ['so he had [Calculator(', ['12 + 30)', '12 - 30)', '42 + 0)']],
  ];
  return new ScriptedPolicy({
    reply: ({ prompt }) => {
      const context = byteTokenizer.decode(prompt, { skipSpecialTokens: true });
      const [key, replies] = proposals.find(([ending]) => context.endsWith(ending)) ?? ['other', ['1 + 1)']];
      const index = asked.get(key) ?? 0;
      asked.set(key, index + 1);
      return at(replies, index % replies.length);
    },
  });
}

const story = 'Tom had 12 apples and bought 30 more, so he had 42 apples.';

describe('Toolformer self-annotation', () => {
  test('loss weights and the call text follow the paper', () => {
    assert.deepEqual(
      lossWeights(0.2).map((w) => Math.round(w * 15 * 1e9) / 1e9),
      [5, 4, 3, 2, 1],
    );
    assert.equal(weightedLoss([0, -1, -2, -3], 1, [0.5, 0.5]), 1.5);
    assert.equal(weightedLoss([0, -1], 1, [0.5, 0.5]), 0.5, 'the window stops at the end of the text');
    assert.equal(apiCallText('Calculator', '12 + 30', '42'), ' [Calculator(12 + 30) → 42]');
    assert.equal(apiCallText('Calculator', '12 + 30'), ' [Calculator(12 + 30)]');
  });

  test('filtering keeps calls whose result helps predict what follows and drops calls that do not', async () => {
    const corpus = await annotate({
      texts: [story, 'The sky is blue and the grass is green.'],
      tool: calculator,
      sampler: callSampler(),
      score: controlledScore,
      samplingThreshold: 0.1,
      filteringThreshold: 0.5,
      callsPerPosition: 3,
    });
    const annotated = at(corpus, 0, 'corpus');
    const plain = at(corpus, 1, 'corpus');
    const summary = annotated.candidates.map((c) => [story.slice(c.offset, c.offset + 3), c.input, c.status]);
    assert.deepEqual(summary, [
      [' 12', '6 * 2', 'kept'],
      [' 30', '30 apples', 'tool-error'],
      [' 30', 'thirty', 'malformed'],
      [' 42', '12 + 30', 'kept'],
      [' 42', '12 - 30', 'filtered'],
      [' 42', '42 + 0', 'filtered'],
    ]);
    const byInput = new Map(annotated.candidates.map((c) => [c.input, c]));
    const candidate = (input: string): CandidateCall => {
      const found = byInput.get(input);
      assert.ok(found, `a candidate with input ${input}`);
      return found;
    };
    // Digits "4" and "2" sit at t = 1, 2 of the window (weights 4/15, 3/15): log 0.1 → −0.1 with the result.
    const helped = (Math.log(0.1) * -1 - 0.1) * (7 / 15);
    assert.ok(
      Math.abs((candidate('12 + 30').gain ?? Number.NaN) - helped) < 1e-5,
      `gain ${candidate('12 + 30').gain} vs ${helped}`,
    );
    assert.equal(candidate('12 - 30').result, '-18');
    assert.ok(Math.abs(candidate('12 - 30').gain ?? Number.NaN) < 1e-6, 'a wrong result does not help');
    const echo = candidate('42 + 0').losses;
    assert.ok(echo, 'the echo call was scored');
    assert.ok(echo.none - echo.withResult > 0.5, 'better than no call at all …');
    assert.ok(echo.empty - echo.withResult < 0.5, '… but not better enough than the call without its result: dropped');
    assert.equal(
      candidate('30 apples').error,
      'error: unexpected "a"; allowed: integers, + - * ( )',
      "runTool's wording for a throwing tool",
    );
    assert.equal(
      annotated.annotated,
      'Tom had [Calculator(6 * 2) → 12] 12 apples and bought 30 more, so he had [Calculator(12 + 30) → 42] 42 apples.',
    );
    assert.deepEqual(plain.candidates, [], 'no position passes τ_s in a text without numbers');
    assert.equal(plain.annotated, plain.text);
  });
});

describe('Toolformer self-annotation with a tiny built-in model', () => {
  test('with a tiny built-in model: positions and losses from the model, the corpus written, and fine-tuning on it', async () => {
    const model = await TransformerModel.create(
      {
        vocabSize: 272,
        hiddenSize: 32,
        numLayers: 1,
        numHeads: 2,
        numKvHeads: 2,
        intermediateSize: 64,
        maxSeqLen: 128,
      },
      { seed: 3 },
    );
    const policy = new BuiltinPolicy({ model });
    const texts = ['Ann had 3 pens and got 4 more, so 7.', 'He had 5 cups and broke 2, so 3 are left.'];
    const corpus = await annotate({
      texts,
      tool: calculator,
      sampler: new ScriptedPolicy({ reply: ['3 + 4)', '5 - 2)', '1 +'] }),
      score: (sequences) => policy.logprobs({ sequences }),
      samplingThreshold: 0,
      topK: 2,
      callsPerPosition: 3,
      filteringThreshold: 0,
    });
    for (const entry of corpus) {
      const positions = new Set(entry.candidates.map((c) => c.position));
      assert.ok(positions.size <= 2, 'at most topK positions');
      for (const candidate of entry.candidates) {
        if (candidate.status === 'malformed') continue;
        assert.ok(candidate.losses, 'a call that parsed was scored');
        const { none, empty, withResult } = candidate.losses;
        assert.ok([none, empty, withResult].every(Number.isFinite));
        assert.equal(
          candidate.status === 'kept',
          Math.min(none, empty) - withResult >= 0,
          'kept exactly when the criterion holds',
        );
      }
      const kept = entry.candidates.filter((c) => c.status === 'kept');
      if (kept.length === 0) assert.equal(entry.annotated, entry.text);
      else
        assert.ok(
          entry.annotated.includes(' → ') &&
            entry.annotated.replace(/ \[Calculator\([^)]*\) → -?\d+\]/g, '') === entry.text,
          'removing the calls gives back the text',
        );
    }
    const dir = await mkdtemp(join(tmpdir(), 'agentrl-toolformer-'));
    try {
      const file = join(dir, 'annotated.jsonl');
      await writeAnnotatedCorpus(file, corpus);
      const lines = (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { text: string; annotated: string; calls: unknown[] });
      assert.deepEqual(
        lines.map((line) => line.text),
        texts,
      );
      assert.deepEqual(
        lines.map((line) => line.annotated),
        corpus.map((entry) => entry.annotated),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const examples = toolformerExamples(corpus, byteTokenizer, 128);
    const before = await heldOutLoss(policy, examples, 2);
    const result = await runSft({
      policy,
      train: examples,
      config: { steps: 8, batchSize: 2, learningRate: 1e-2, warmupSteps: 0, evalEvery: 8 },
    });
    assert.ok(Number.isFinite(result.finalLoss));
    const after = await heldOutLoss(policy, examples, 2);
    assert.ok(after < before, `fine-tuning on the annotated corpus lowered its loss (${before} → ${after})`);
  });
});
