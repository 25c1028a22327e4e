/**
 * A searchable text store with paged results — MemGPT's recall storage (every message) and
 * archival storage (what the agent chose to keep). Search is by keywords, no embeddings: an entry
 * scores the number of distinct query words it contains (case-insensitive, words of letters and
 * digits); entries that share no word are left out; ties go to the newer entry.
 */
export interface StoredEntry {
  /** Insertion order, from 0. */
  index: number;
  text: string;
}

export interface SearchPage {
  query: string;
  /** 0-based. */
  page: number;
  pageSize: number;
  total: number;
  entries: StoredEntry[];
}

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

export class MemoryStore {
  readonly entries: StoredEntry[] = [];

  insert(text: string): StoredEntry {
    const entry = { index: this.entries.length, text };
    this.entries.push(entry);
    return entry;
  }

  get size(): number {
    return this.entries.length;
  }

  search(query: string, { page = 0, pageSize = 5 }: { page?: number; pageSize?: number } = {}): SearchPage {
    const wanted = new Set(words(query));
    const scored = this.entries
      .map((entry) => {
        const present = new Set(words(entry.text));
        let score = 0;
        for (const word of wanted) if (present.has(word)) score++;
        return { entry, score };
      })
      .filter(({ score }) => score > 0)
      .sort((a, b) => b.score - a.score || b.entry.index - a.entry.index);
    const start = page * pageSize;
    return {
      query,
      page,
      pageSize,
      total: scored.length,
      entries: scored.slice(start, start + pageSize).map(({ entry }) => entry),
    };
  }
}

/** A result page as the text the model reads. */
export function formatPage(result: SearchPage): string {
  const pages = Math.max(1, Math.ceil(result.total / result.pageSize));
  if (result.total === 0) return `No results for "${result.query}".`;
  if (result.entries.length === 0)
    return `No page ${result.page} for "${result.query}": ${result.total} results on pages 0-${pages - 1}.`;
  const first = result.page * result.pageSize;
  return [
    `Results ${first + 1}-${first + result.entries.length} of ${result.total} for "${result.query}" (page ${result.page} of 0-${pages - 1}):`,
    ...result.entries.map((entry) => `[${entry.index}] ${entry.text}`),
  ].join('\n');
}
