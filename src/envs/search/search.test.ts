import assert from 'node:assert/strict';
import { test } from 'node:test';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { rollout } from '../../rollout/rollout.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeed, splitSeeds } from '../split.ts';
import { generateCorpus } from './corpus.ts';
import { makeSearch, type SearchData } from './env.ts';
import { searchExpert } from './expert.ts';
import { makeRetriever } from './retriever.ts';
import { exactMatch, normalizeAnswer, searchReward } from './reward.ts';

envContract('search', () => makeSearch({ formatPenalty: 0.1 }), {
  makeExpert: searchExpert,
  maxObservationBytes: 1024,
  invalidActions: [
    '<search></search>',
    '<search>x</search> extra',
    '<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call>',
  ],
  invalidActionReward: -0.1,
});

test('SQuAD normalisation and exact match', () => {
  assert.equal(normalizeAnswer('  The  Glass-Bells, of a town! '), 'glassbells of town');
  assert.ok(exactMatch('the Tarsil.', 'tarsil'));
  assert.ok(!exactMatch('Tarsil city', 'Tarsil'));
});

test('composite reward R = R_answer + λ1·R_citation − λ2·C_search − λ3·R_hallucination, by hand', () => {
  const retrieved = [{ title: 'Velmo Kest', text: 'Velmo Kest is a poet, born in 1801 in the city of Tarsil.' }];
  const base = { gold: 'Tarsil', support: ['Velmo Kest', 'Tarsil'], retrieved, searches: 1, budget: 4 };
  const weights = { citation: 0.5, search: 0.2, hallucination: 1 };
  const right = searchReward({ ...base, answer: 'Tarsil (sources: Velmo Kest; Tarsil)' }, weights);
  // cited both, but only Velmo Kest was retrieved → citation 1/2
  assert.deepEqual(right, { answer: 1, citation: 0.5, searchCost: 0.25, hallucination: 0, total: 1 + 0.25 - 0.05 });
  const grounded = searchReward({ ...base, answer: 'Velmo Kest' }, weights);
  assert.deepEqual([grounded.answer, grounded.hallucination, grounded.total], [0, 0, -0.05]);
  const invented = searchReward({ ...base, answer: 'Zorblat' }, weights);
  assert.deepEqual([invented.hallucination, invented.total], [1, -1.05]);
});

test('corpus: unique titles, linked multi-hop questions; BM25 puts each supporting article in the top 3 for its title', () => {
  const corpus = generateCorpus(7);
  const titles = corpus.articles.map((article) => article.title.toLowerCase());
  assert.equal(new Set(titles).size, titles.length);
  assert.ok(
    corpus.questions.some((question) => question.hops === 2) &&
      corpus.questions.some((question) => question.hops === 1),
  );
  const retriever = makeRetriever(corpus.articles);
  for (const question of corpus.questions) {
    for (const title of question.support)
      assert.ok(
        retriever.search(title, 3).some((hit) => hit.title === title),
        title,
      );
    const last = corpus.articles.find((article) => article.title === question.support.at(-1))!;
    assert.ok(last.text.includes(question.answer), `${question.question} → ${question.answer}`);
  }
});

test('search episode: <search> gives <information> (top-3), the budget is enforced, answer scored by EM', async () => {
  const env = makeSearch({ searchBudget: 1 });
  const question = env.questionsOf('test').find((candidate) => candidate.hops === 2)!;
  await env.reset({ seed: splitSeed('test', 0), task: question });
  const first = await env.step({ text: `<think>start</think><search> ${question.support[0]} city </search>` });
  assert.match(
    first.observation.text,
    /^\n\n<information>Doc 1\(Title: [^)]+\) .*\nDoc 2\(Title: .*\nDoc 3\(Title: .*<\/information>\n\n$/s,
  );
  const over = await env.step({ text: `<search> ${question.support[1]} </search>` });
  assert.equal(over.observation.text, '<tool_response>error: search budget of 1 used up; answer now</tool_response>');
  const last = await env.step({ text: `<answer> the ${question.answer.toUpperCase()} </answer>` });
  assert.deepEqual([last.reward, last.done, last.info.success], [1, true, true]);
});

test('search expert answers every held-out question (single- and multi-hop); random answers do not', async () => {
  const env = makeSearch();
  const seeds = splitSeeds('test', 40);
  let expertWins = 0;
  let randomWins = 0;
  for (const seed of seeds) {
    const episode = await playEpisode(env, searchExpert({ seed }), seed);
    if (episode.success) expertWins++;
    if ((await playEpisode(env, searchExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, seeds.length);
  assert.ok(randomWins <= 2, `random ${randomWins}/40`);
});

test('<information> tokens are observations: lossMask 0 in the rollout; the <search> calls are trained on', async () => {
  const { trajectories } = await rollout({
    env: () => makeSearch(),
    seeds: splitSeeds('test', 4),
    expert: ({ seed }) => searchExpert({ seed }),
    policy: undefined,
    maxTurns: 4,
    maxNewTokens: 200,
    contextWindow: 8192,
  });
  for (const trajectory of trajectories) {
    const trained = byteTokenizer.decode(trajectory.tokens.filter((_, i) => trajectory.lossMask[i] === 1));
    const masked = byteTokenizer.decode(trajectory.tokens.filter((_, i) => trajectory.lossMask[i] === 0));
    assert.ok(trained.includes('<search>') && trained.includes('<answer>'));
    assert.ok(!trained.includes('<information>') && !trained.includes('Doc 1(Title:'));
    assert.ok(masked.includes('<information>Doc 1(Title:'));
    assert.equal(trajectory.success, true);
  }
  const data = (await makeSearch().reset({ seed: splitSeed('test', 0) })).data as SearchData;
  assert.equal(data.searchesLeft, 3);
});

test('a 10 MB <search> is an invalid turn answered at once; a query over maxQueryChars is invalid, as text or tool call', async () => {
  const env = makeSearch({ formatPenalty: 0.1 });
  const corpusWords = 'tarsil river north kingdom founded city mountain capital ancient ';
  await env.reset({ seed: 5 });
  const started = performance.now();
  const huge = await env.step({ text: `<search>${corpusWords.repeat(160_000)}</search>` });
  assert.ok(performance.now() - started < 1000, 'answered in under a second');
  assert.deepEqual([huge.info.invalidAction, huge.reward, huge.done], [true, -0.1, false]);
  assert.match(huge.observation.text, /^invalid: action of 10400017 characters is over the limit of 16384$/);

  const longQuery = corpusWords.repeat(9).trim(); // 584 characters
  await env.reset({ seed: 5 });
  const text = await env.step({ text: `<search>${longQuery}</search>` });
  assert.deepEqual(
    [text.info.invalidAction, text.info.reason],
    [true, 'query of 584 characters is over the limit of 512'],
  );
  await env.reset({ seed: 5 });
  const call = await env.step({ text: '', toolCall: { id: '1', name: 'search', arguments: { query: longQuery } } });
  assert.equal(call.info.invalidAction, true);
  assert.match(String(call.info.reason), /^invalid arguments for search: query: Too big/);
  assert.deepEqual((call.observation.data as SearchData).queries, [], 'no search was run');
});
