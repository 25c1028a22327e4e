/**
 * Search (Search-R1 protocol): answer a question about the generated encyclopedia (corpus.ts),
 * searching it with BM25. Each turn is
 *
 *   <think>…</think><search> query </search>      → \n\n<information>Doc 1(Title: t) text…</information>\n\n (top-k)
 *   <think>…</think><answer> Tarsil </answer>      → scored, the episode ends
 *
 * (a `search` tool call `{"query": …}` works the same). At most `searchBudget` (K) searches; a
 * search beyond it is answered "search budget … used up; answer now". Reward: exact match after SQuAD normalisation, or with any λ > 0 the
 * composite R = R_answer + λ1·R_citation − λ2·C_search − λ3·R_hallucination (reward.ts; the named
 * components: rewards.ts).
 * The `<information>` blocks are env observations, so the rollout gives them lossMask 0.
 *
 * Questions are split by index (index % 10 = 0 → test, 1 → validation, else train) over one
 * corpus fixed by `corpusSeed`.
 */
import { z } from 'zod';
import type { Split } from '../../core/index.ts';
import type { ParsedAction, ParsedToolCall } from '../action-format.ts';
import { tool } from '../../core/tool.ts';
import { actionCharLimits, parseAction } from '../action-format.ts';
import { parseOptions } from '../options.ts';
import { SPLIT_SIZE, splitOfSeed } from '../split.ts';
import { ToolTaskEnv, toolTaskOptionsShape, type ToolTaskEpisode, type Verdict } from '../tool-task.ts';
import { generateCorpus, type Article, type Corpus, type Question } from './corpus.ts';
import { makeRetriever, renderDocuments, type Retriever } from './retriever.ts';
import { searchReward, type SearchRewardParts } from './reward.ts';
import { searchRubric } from './rewards.ts';
import { InvalidArgumentError, ToolError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';

export const searchOptionsSchema = z.strictObject({
  ...toolTaskOptionsShape,
  maxToolResultChars: z.number().int().positive().default(600),
  maxActionChars: z.number().int().positive().default(actionCharLimits.text),
  /** Longest query, in characters: a Search-R1 query is a few words, and BM25 over a query costs more than linear time in its length. */
  maxQueryChars: z.number().int().positive().default(512),
  /** Seed of the generated corpus. */
  corpusSeed: z.number().int().nonnegative().default(7),
  /** Search budget K: searches allowed per episode. */
  searchBudget: z.number().int().min(0).default(3),
  /** Documents per search. */
  topK: z.number().int().min(1).max(10).default(3),
  /** Which questions: 1 = single-hop only, 2 = multi-hop only, 0 = both. */
  hops: z.union([z.literal(0), z.literal(1), z.literal(2)]).default(0),
  /** λ1: weight of the citation reward. */
  citationWeight: z.number().min(0).default(0),
  /** λ2: weight of the search cost (searches / K). */
  searchCostWeight: z.number().min(0).default(0),
  /** λ3: weight of the hallucination penalty. */
  hallucinationWeight: z.number().min(0).default(0),
});
export type SearchOptions = z.input<typeof searchOptionsSchema>;

/** `observation.data`: what the agent may see — the question and its hop count, searches made and left. */
export interface SearchData {
  question: Pick<Question, 'question' | 'hops'>;
  queries: string[];
  searchesLeft: number;
}

/** `observation.privileged`: the gold answer and the titles of the supporting articles (for the scripted expert). */
export type SearchPrivileged = Pick<Question, 'answer' | 'support'>;

export interface SearchEpisode extends ToolTaskEpisode {
  question: Question;
  queries: string[];
  retrieved: Article[];
  /** The answer's reward parts (null before the answer). */
  scored: SearchRewardParts | null;
}

const searchPattern = /^\s*(?:<think>([\s\S]*?)<\/think>)?\s*<search>([\s\S]*?)<\/search>\s*$/;

export class SearchEnv extends ToolTaskEnv<Question, SearchEpisode, z.output<typeof searchOptionsSchema>> {
  readonly name = 'search';
  readonly instructions =
    'Answer the question. Reason inside <think>...</think>. To search the encyclopedia write <search> query </search>; ' +
    'results come back between <information> and </information>. Give the final answer without explanation: <answer> Tarsil </answer>.';
  readonly corpus: Corpus;
  readonly rewardComponents = searchRubric(this.options);
  private readonly retriever: Retriever;

  constructor(options: SearchOptions = {}) {
    super(parseOptions(searchOptionsSchema, options, 'search'));
    this.corpus = generateCorpus(this.options.corpusSeed);
    this.retriever = makeRetriever(this.corpus.articles);
    this.tools = [
      tool({
        name: 'search',
        description: 'BM25 search over the encyclopedia; returns the top documents.',
        inputSchema: z.strictObject({ query: z.string().min(1).max(this.options.maxQueryChars) }),
        execute: ({ query }) => this.search(query),
      }),
    ];
  }

  /** The questions of a split (with the `hops` filter). */
  questionsOf(split: Split): Question[] {
    const slot = { test: 0, validation: 1 }[split as 'test' | 'validation'];
    return this.corpus.questions.filter(
      (question, index) =>
        (slot === undefined ? index % 10 > 1 : index % 10 === slot) &&
        (this.options.hops === 0 || question.hops === this.options.hops),
    );
  }

  protected override parseTurn(text: string): ParsedAction {
    const search = text.match(searchPattern);
    if (search === null) return parseAction(text, { maxChars: this.options.maxActionChars });
    const query = (search[2] ?? '').trim();
    if (query === '') return { kind: 'invalid', reason: 'empty <search>' };
    if (query.length > this.options.maxQueryChars)
      return {
        kind: 'invalid',
        reason: `query of ${query.length} characters is over the limit of ${this.options.maxQueryChars}`,
      };
    return { kind: 'tool_call', thinking: search[1]?.trim() ?? null, call: { name: 'search', arguments: { query } } };
  }

  protected override renderToolResult(call: ParsedToolCall, result: string, failed: boolean): string {
    return call.name === 'search' && !failed
      ? `\n\n<information>${result}</information>\n\n`
      : `<tool_response>${result}</tool_response>`;
  }

  private search(query: string): string {
    const episode = this.current();
    if (episode.queries.length >= this.options.searchBudget)
      throw new ToolError('search', `search budget of ${this.options.searchBudget} used up; answer now`);
    episode.queries.push(query);
    const documents = this.retriever.search(query, this.options.topK);
    for (const document of documents)
      if (!episode.retrieved.some((seen) => seen.id === document.id)) episode.retrieved.push(document);
    return documents.length === 0 ? 'no documents found' : renderDocuments(documents);
  }

  protected async start(seed: number, task: Question | undefined): Promise<{ episode: SearchEpisode; text: string }> {
    const questions = this.questionsOf(splitOfSeed(seed));
    if (task !== undefined && task.support.length === 0)
      throw new InvalidArgumentError(
        'search task: support must name at least one article (the citation reward is a fraction of them)',
      );
    const question = task ?? at(questions, (seed % SPLIT_SIZE) % questions.length, 'search questions');
    return {
      episode: { question, queries: [], retrieved: [], scored: null, turnsUsed: 0, ended: false },
      text: `Question: ${question.question}`,
    };
  }

  protected async finish(episode: SearchEpisode, answer: string): Promise<Verdict> {
    const { citationWeight, searchCostWeight, hallucinationWeight, searchBudget } = this.options;
    const parts = searchReward(
      {
        answer,
        gold: episode.question.answer,
        support: episode.question.support,
        retrieved: episode.retrieved,
        searches: episode.queries.length,
        budget: searchBudget,
      },
      { citation: citationWeight, search: searchCostWeight, hallucination: hallucinationWeight },
    );
    episode.scored = parts;
    return {
      success: parts.answer === 1,
      text: parts.answer === 1 ? 'correct' : 'wrong',
      info: { ...parts },
    };
  }

  protected data(episode: SearchEpisode): SearchData {
    const { question, hops } = episode.question;
    return {
      question: { question, hops },
      queries: [...episode.queries],
      searchesLeft: this.options.searchBudget - episode.queries.length,
    };
  }

  protected override privileged(episode: SearchEpisode): SearchPrivileged {
    const { answer, support } = episode.question;
    return { answer, support: [...support] };
  }
}

export function makeSearch(options: SearchOptions = {}): SearchEnv {
  return new SearchEnv(options);
}
