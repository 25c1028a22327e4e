/**
 * Search rewards. `exactMatch`: SQuAD normalisation (lower-case, drop punctuation and the
 * articles a/an/the, collapse whitespace) then string equality — Search-R1's outcome reward.
 *
 * The survey's composite option R = R_answer + λ1·R_citation − λ2·C_search − λ3·R_hallucination:
 * - R_answer: exact match (1 or 0);
 * - R_citation: the answer may cite its sources as a trailing `(sources: Title A; Title B)`;
 *   the fraction of the question's supporting articles that were both cited and retrieved;
 * - C_search: searches used / search budget K;
 * - R_hallucination: 1 when the answer is wrong and appears in no retrieved article (it was not
 *   grounded in anything the agent read), else 0.
 */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function exactMatch(prediction: string, gold: string): boolean {
  return normalizeAnswer(prediction) === normalizeAnswer(gold);
}

/** Splits `Tarsil (sources: Velmora Kestrin; Tarsil)` into the answer and the cited titles. */
export function splitCitations(answer: string): { answer: string; cited: string[] } {
  const match = answer.match(/\s*\(sources?:([^)]*)\)\s*$/i);
  if (match === null) return { answer, cited: [] };
  return {
    answer: answer.slice(0, match.index),
    cited: (match[1] ?? '')
      .split(';')
      .map((title) => title.trim())
      .filter(Boolean),
  };
}

export interface SearchRewardInput {
  answer: string;
  gold: string;
  support: readonly string[];
  /** Titles and texts of every article retrieved in the episode. */
  retrieved: ReadonlyArray<{ title: string; text: string }>;
  searches: number;
  budget: number;
}

export interface SearchRewardWeights {
  citation: number;
  search: number;
  hallucination: number;
}

export interface SearchRewardParts {
  answer: number;
  citation: number;
  searchCost: number;
  hallucination: number;
  total: number;
}

export function searchReward(input: SearchRewardInput, weights: SearchRewardWeights): SearchRewardParts {
  const { answer: text, cited } = splitCitations(input.answer);
  const answer = exactMatch(text, input.gold) ? 1 : 0;
  const retrievedTitles = new Set(input.retrieved.map((document) => normalizeAnswer(document.title)));
  const citedTitles = new Set(cited.map(normalizeAnswer));
  const citation =
    input.support.filter(
      (title) => citedTitles.has(normalizeAnswer(title)) && retrievedTitles.has(normalizeAnswer(title)),
    ).length / input.support.length;
  const searchCost = input.budget === 0 ? 0 : input.searches / input.budget;
  const normalized = normalizeAnswer(text);
  const grounded =
    normalized !== '' &&
    input.retrieved.some((document) => normalizeAnswer(`${document.title} ${document.text}`).includes(normalized));
  const hallucination = answer === 0 && !grounded ? 1 : 0;
  const total =
    answer + weights.citation * citation - weights.search * searchCost - weights.hallucination * hallucination;
  return { answer, citation, searchCost, hallucination, total };
}
