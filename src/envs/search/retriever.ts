/**
 * BM25 retrieval over the corpus with MiniSearch (its BM25+ scoring), the top k articles (fewer when fewer match) rendered in
 * Search-R1's format: `Doc 1(Title: t) text`.
 */
import MiniSearch from 'minisearch';
import type { Article } from './corpus.ts';

export interface Retriever {
  search(query: string, topK: number): Article[];
}

export function makeRetriever(articles: readonly Article[]): Retriever {
  const index = new MiniSearch<Article>({ fields: ['title', 'text'], storeFields: ['title', 'text'] });
  index.addAll(articles as Article[]);
  return {
    search(query, topK) {
      return index
        .search(query, { boost: { title: 2 }, combineWith: 'OR' })
        .slice(0, topK)
        .map((hit) => ({ id: hit.id as number, title: hit.title as string, text: hit.text as string }));
    },
  };
}

/** Search-R1's rendering of retrieved documents (inside `<information>`). */
export function renderDocuments(documents: readonly Article[]): string {
  return documents.map((document, i) => `Doc ${i + 1}(Title: ${document.title}) ${document.text}`).join('\n');
}
