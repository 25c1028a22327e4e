/**
 * The judges' content-addressed cache: a reply is stored under the SHA-256 of what determines it —
 * the model, the messages and the sampling settings — so the same episode (or the same group) is
 * not judged twice. Bounded: past `capacity` entries the least recently used goes (a `Map` keeps
 * insertion order; a hit re-inserts its entry at the end). The judges store what they parsed out of a
 * reply (a score, scores by id), and only when it parsed, so a malformed reply is asked again next
 * time rather than replayed.
 */
import { createHash } from 'node:crypto';

/** The cache key: hex SHA-256 over a canonical JSON of everything the reply depends on. */
export function judgeCacheKey(request: {
  model: string;
  messages: readonly { role: string; content: string }[];
  sampling: Readonly<Record<string, unknown>>;
}): string {
  const sampling = Object.fromEntries(Object.entries(request.sampling).sort(([a], [b]) => a.localeCompare(b)));
  const canonical = JSON.stringify([request.model, request.messages.map((m) => [m.role, m.content]), sampling]);
  return createHash('sha256').update(canonical).digest('hex');
}

export class JudgeCache<V> {
  private readonly entries = new Map<string, V>();
  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    if (this.capacity === 0) return;
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }
}
