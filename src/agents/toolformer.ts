/**
 * Toolformer-style self-annotation (Schick et al. 2023, arXiv 2302.04761): the model annotates a
 * plain-text corpus with the API calls that help it predict the text, and is fine-tuned on the
 * result. For each text x = x₁…xₙ and one tool:
 *
 * 1. sample positions: pᵢ = p(<API> | P(x), x₁…xᵢ₋₁) for every i, where <API> is the call marker
 *    ` [` and P(x) the annotation prompt (few-shot examples); keep the `topK` positions with
 *    pᵢ > τ_s;
 * 2. sample `callsPerPosition` calls at each: continue P(x), x₁…xᵢ₋₁, ` [Tool(` up to `)`;
 * 3. execute them with `runTool` (a call that throws or never closes is dropped);
 * 4. filter: with the weighted loss of the tokens that follow,
 *      Lᵢ(z) = −Σⱼ w_{j−i} log p(xⱼ | x₁…xᵢ₋₁, z, xᵢ…xⱼ₋₁),   w̃ₜ = max(0, 1 − 0.2·t), w = w̃ / Σw̃,
 *    keep the call when min(Lᵢ(ε), Lᵢ(e(c, ε))) − Lᵢ(e(c, r)) ≥ τ_f — its result must help more
 *    than both no call and the call without its result. e(c, r) = ` [Tool(input) → r]`,
 *    e(c, ε) = ` [Tool(input)]`, inserted before xᵢ;
 * 5. the annotated text holds every kept call (the best one per position); `writeAnnotatedCorpus`
 *    writes the corpus as JSONL and `toolformerExamples` turns it into SFT examples (train/sft.ts).
 *
 * Scores come from `score` (per-token log-probs of whole sequences, index 0 = 0: a trainable
 * policy's `logprobs`), calls from `sampler` (any policy), so either can be swapped.
 */
import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { runTool } from '../core/tool.ts';
import type { Tool } from '../core/types.ts';
import type { Tokenizer } from '../chat/tokenizer.ts';
import type { Policy } from '../policy/types.ts';

export interface ToolformerTool {
  /** The name in the call text, e.g. `Calculator`. */
  name: string;
  execute: (input: string) => unknown;
}

export type SequenceScorer = (sequences: number[][]) => Promise<ArrayLike<number>[]>;

export interface AnnotateOptions {
  texts: readonly string[];
  tool: ToolformerTool;
  /** Samples the calls. */
  sampler: Policy;
  /** Per-token log-probs of sequences (index 0 = 0). */
  score: SequenceScorer;
  /** P(x): put before each text when sampling positions and calls (e.g. few-shot examples). */
  prompt?: string;
  /** τ_s. Default 0.05. */
  samplingThreshold?: number;
  /** τ_f. Default 1. */
  filteringThreshold?: number;
  /** Positions kept per text at most. Default 5. */
  topK?: number;
  /** m: calls sampled per position. Default 3. */
  callsPerPosition?: number;
  /** Tokens of a sampled call input at most. Default 32. */
  maxCallTokens?: number;
  /** Decay of the loss weights, w̃ₜ = max(0, 1 − decay·t). Default 0.2. */
  weightDecay?: number;
  /** Sampling temperature of calls. Default 1. */
  temperature?: number;
  seed?: number;
}

export interface CandidateCall {
  /** Character offset in the text where the call goes (before the token at this position). */
  offset: number;
  /** Token position i in the text. */
  position: number;
  /** p(<API>) at the position. */
  probability: number;
  input: string;
  result?: string;
  /** Lᵢ(ε), Lᵢ(e(c, ε)), Lᵢ(e(c, r)) when the call ran. */
  losses?: { none: number; empty: number; withResult: number };
  /** min(none, empty) − withResult. */
  gain?: number;
  status: 'kept' | 'filtered' | 'tool-error' | 'malformed';
  /** The error of a call that threw or did not parse. */
  error?: string;
}

export interface AnnotatedText {
  text: string;
  /** The text with the kept calls inserted. */
  annotated: string;
  candidates: CandidateCall[];
}

const ARROW = ' → ';

/** e(c, r), or e(c, ε) when `result` is undefined. */
export function apiCallText(tool: string, input: string, result?: string): string {
  return ` [${tool}(${input})${result === undefined ? '' : `${ARROW}${result}`}]`;
}

/** The normalised weights w₀…: w̃ₜ = max(0, 1 − decay·t), divided by their sum. */
export function lossWeights(decay = 0.2): number[] {
  if (!(decay > 0 && decay <= 1))
    throw new InvalidArgumentError(`weightDecay must be in (0, 1], got ${decay}`, { decay });
  const raw: number[] = [];
  for (let t = 0; 1 - decay * t > 1e-12; t++) raw.push(1 - decay * t);
  const total = raw.reduce((a, b) => a + b, 0);
  return raw.map((w) => w / total);
}

/** −Σₜ wₜ log p(token at start + t), over the tokens that exist. */
export function weightedLoss(logprobs: ArrayLike<number>, start: number, weights: readonly number[]): number {
  let loss = 0;
  const end = Math.min(weights.length, logprobs.length - start);
  for (let t = 0; t < end; t++) loss -= at(weights, t, 'weights') * at(logprobs, start + t, 'logprobs');
  return loss;
}

export async function annotate(options: AnnotateOptions): Promise<AnnotatedText[]> {
  const annotator = makeAnnotator(options);
  const results: AnnotatedText[] = [];
  for (const text of options.texts) results.push(await annotateText(annotator, text));
  return results;
}

/** What every text of one `annotate` run shares: the options with their defaults, the loss weights and the fixed ids. */
interface Annotator {
  options: Required<Omit<AnnotateOptions, 'weightDecay' | 'seed'>>;
  weights: number[];
  tokenizer: Tokenizer;
  bos: number;
  /** `<|bos|>` P(x). */
  promptIds: number[];
  /** The ids of " [", whose probability marks a call position. */
  marker: number[];
  /** The ids of " [Tool(", that a sampled call continues. */
  opening: number[];
  /** The next call's sampling seed (it advances over all texts). */
  seed: number;
}

function makeAnnotator(options: AnnotateOptions): Annotator {
  const {
    texts,
    tool,
    sampler,
    score,
    prompt = '',
    samplingThreshold = 0.05,
    filteringThreshold = 1,
    topK = 5,
    callsPerPosition = 3,
    maxCallTokens = 32,
    temperature = 1,
  } = options;
  const weights = lossWeights(options.weightDecay);
  const { tokenizer } = sampler;
  const bos = tokenizer.specialTokens.bos;
  return {
    options: {
      texts,
      tool,
      sampler,
      score,
      prompt,
      samplingThreshold,
      filteringThreshold,
      topK,
      callsPerPosition,
      maxCallTokens,
      temperature,
    },
    weights,
    tokenizer,
    bos,
    promptIds: [bos, ...tokenizer.encode(prompt)],
    marker: tokenizer.encode(' ['),
    opening: tokenizer.encode(` [${tool.name}(`),
    seed: options.seed ?? 0,
  };
}

async function annotateText(annotator: Annotator, text: string): Promise<AnnotatedText> {
  const ids = annotator.tokenizer.encode(text);
  const offsets = characterOffsets(ids, annotator.tokenizer);
  const candidates: CandidateCall[] = [];
  for (const { position, probability } of await callPositions(annotator, ids)) {
    candidates.push(
      ...(await sampleCalls(annotator, ids, { offset: at(offsets, position, 'offsets'), position, probability })),
    );
  }
  await filterCalls(annotator, ids, candidates);
  return { text, annotated: insertBestCalls(annotator.options.tool.name, text, candidates), candidates };
}

/** 1. p(<API>) before every token (the log-prob of the marker's ids after the prefix): the topK positions past τ_s, in order. */
async function callPositions(
  annotator: Annotator,
  ids: readonly number[],
): Promise<{ position: number; probability: number }[]> {
  const { promptIds, marker, options } = annotator;
  const markerScores = await options.score(ids.map((_, i) => [...promptIds, ...ids.slice(0, i), ...marker]));
  const probabilities = markerScores.map((logprobs) => {
    let sum = 0;
    for (let k = logprobs.length - marker.length; k < logprobs.length; k++) sum += at(logprobs, k, 'logprobs');
    return Math.exp(sum);
  });
  return probabilities
    .map((probability, position) => ({ position, probability }))
    .filter(({ position, probability }) => position > 0 && probability > options.samplingThreshold)
    .sort((a, b) => b.probability - a.probability || a.position - b.position)
    .slice(0, options.topK)
    .sort((a, b) => a.position - b.position);
}

/** 2. m calls sampled at the position, each distinct input once; 3. each parsed one executed. */
async function sampleCalls(
  annotator: Annotator,
  ids: readonly number[],
  base: Pick<CandidateCall, 'offset' | 'position' | 'probability'>,
): Promise<CandidateCall[]> {
  const { tool, sampler, callsPerPosition, maxCallTokens, temperature } = annotator.options;
  const context = [...annotator.promptIds, ...ids.slice(0, base.position), ...annotator.opening];
  const inputs = new Map<string, CandidateCall>();
  for (let k = 0; k < callsPerPosition; k++) {
    const generation = await sampler.generate({
      prompt: context,
      maxNewTokens: maxCallTokens,
      temperature,
      stopStrings: [')'],
      seed: annotator.seed++,
    });
    const close = generation.text.indexOf(')');
    const input = close < 0 ? generation.text : generation.text.slice(0, close).trim();
    if (inputs.has(input)) continue;
    const call = { ...base, input };
    if (close < 0 || input === '') {
      inputs.set(input, {
        ...call,
        status: 'malformed',
        error: close < 0 ? 'the call was not closed with ")"' : 'empty input',
      });
      continue;
    }
    const run = await runTool([asTool(tool)], { name: tool.name, arguments: input });
    inputs.set(
      input,
      run.ok ? { ...call, result: run.text, status: 'filtered' } : { ...call, status: 'tool-error', error: run.error },
    );
  }
  return [...inputs.values()];
}

/** The string-input tool as a `Tool` (its input is the call's text), so `runTool` runs it as every other tool. */
function asTool(tool: ToolformerTool): Tool<string> {
  return { name: tool.name, description: `${tool.name}(input)`, inputSchema: z.string(), execute: tool.execute };
}

/** 4. filter: L(ε), L(e(c, ε)), L(e(c, r)) over the tokens from the position on; a call is kept when its gain reaches τ_f. */
async function filterCalls(
  annotator: Annotator,
  ids: readonly number[],
  candidates: readonly CandidateCall[],
): Promise<void> {
  const { tokenizer, bos, weights } = annotator;
  const { tool, score, filteringThreshold } = annotator.options;
  const runnable = candidates.filter((candidate) => candidate.result !== undefined);
  const sequences: number[][] = [[bos, ...ids]];
  for (const candidate of runnable) {
    const before = ids.slice(0, candidate.position);
    const after = ids.slice(candidate.position);
    sequences.push([bos, ...before, ...tokenizer.encode(apiCallText(tool.name, candidate.input)), ...after]);
    sequences.push([
      bos,
      ...before,
      ...tokenizer.encode(apiCallText(tool.name, candidate.input, candidate.result)),
      ...after,
    ]);
  }
  const scored = await score(sequences);
  runnable.forEach((candidate, k) => {
    const emptyLength = tokenizer.encode(apiCallText(tool.name, candidate.input)).length;
    const fullLength = tokenizer.encode(apiCallText(tool.name, candidate.input, candidate.result)).length;
    const start = 1 + candidate.position;
    const none = weightedLoss(at(scored, 0, 'scored'), start, weights);
    const empty = weightedLoss(at(scored, 1 + 2 * k, 'scored'), start + emptyLength, weights);
    const withResult = weightedLoss(at(scored, 2 + 2 * k, 'scored'), start + fullLength, weights);
    candidate.losses = { none, empty, withResult };
    candidate.gain = Math.min(none, empty) - withResult;
    if (candidate.gain >= filteringThreshold) candidate.status = 'kept';
  });
}

/** 5. the best kept call per position, inserted right to left. */
function insertBestCalls(toolName: string, text: string, candidates: readonly CandidateCall[]): string {
  const best = new Map<number, CandidateCall>();
  const gain = (candidate: CandidateCall): number => candidate.gain ?? -Infinity;
  for (const candidate of candidates) {
    if (candidate.status !== 'kept') continue;
    const current = best.get(candidate.position);
    if (current === undefined || gain(candidate) > gain(current)) best.set(candidate.position, candidate);
  }
  let annotated = text;
  for (const candidate of [...best.values()].sort((a, b) => b.offset - a.offset)) {
    annotated =
      annotated.slice(0, candidate.offset) +
      apiCallText(toolName, candidate.input, candidate.result) +
      annotated.slice(candidate.offset);
  }
  return annotated;
}

/** Character offset of each token's start (byte-exact for byte-level and BPE tokenizers on valid UTF-8). */
function characterOffsets(ids: readonly number[], tokenizer: Tokenizer): number[] {
  return ids.map((_, i) => tokenizer.decode(ids.slice(0, i)).length);
}

/** Writes the annotated corpus as JSONL: {"text", "annotated", "calls": [{offset, input, result, gain}]}. */
export async function writeAnnotatedCorpus(path: string, corpus: readonly AnnotatedText[]): Promise<void> {
  const lines = corpus.map((entry) =>
    JSON.stringify({
      text: entry.text,
      annotated: entry.annotated,
      calls: entry.candidates
        .filter((c) => c.status === 'kept')
        .map(({ offset, input, result, gain }) => ({ offset, input, result, gain })),
    }),
  );
  await writeFile(path, lines.length === 0 ? '' : `${lines.join('\n')}\n`);
}

/** Plain language-model examples of the annotated texts for `runSft`: `<|bos|>` then the text, every text token trained. */
export function toolformerExamples(
  corpus: readonly AnnotatedText[],
  tokenizer: Tokenizer,
  maxSeqLen: number,
): { tokens: number[]; mask: number[] }[] {
  return corpus.map((entry) => {
    const tokens = [tokenizer.specialTokens.bos, ...tokenizer.encode(entry.annotated)].slice(0, maxSeqLen);
    return { tokens, mask: tokens.map((_, t) => (t === 0 ? 0 : 1)) };
  });
}
