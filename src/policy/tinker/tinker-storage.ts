/**
 * What a Tinker run leaves on the server, and its cleanup: sampler weights are saved once per
 * optimizer step with a TTL (default 1 hour, the SDK's smallest; the previous step's are deleted
 * once the next are saved), training checkpoints (`save`, `saveState`) with the TTL the user chose
 * (default none: kept). `summary()` says what is kept, for the CLI to print at the end of a run.
 */
import type { TinkerClient } from './tinker-client.ts';

export interface StoredCheckpoint {
  /** `tinker://<run>/<weights|sampler_weights>/<name>`. */
  path: string;
  kind: 'weights' | 'sampler_weights';
  /** Seconds the server keeps it; undefined = until deleted. */
  ttlSeconds: number | undefined;
}

export interface StorageSummary {
  /** Checkpoints this run saved and did not delete. */
  kept: StoredCheckpoint[];
  /** Sampler weights this run deleted once newer ones were saved. */
  deleted: number;
  /** Deletions the server refused (e.g. a server without the checkpoint routes); their TTL still applies. */
  failedDeletes: number;
}

export class TinkerStorage {
  private readonly saved: StoredCheckpoint[] = [];
  private deleted = 0;
  private failedDeletes = 0;

  constructor(private readonly client: TinkerClient) {}

  record(checkpoint: StoredCheckpoint): void {
    this.saved.push(checkpoint);
  }

  /** Deletes every sampler checkpoint but `current` (best effort: a refused delete is counted, its TTL still runs). */
  async dropStaleSamplers(current: string): Promise<void> {
    const stale = this.saved.filter((entry) => entry.kind === 'sampler_weights' && entry.path !== current);
    for (const entry of stale) {
      this.saved.splice(this.saved.indexOf(entry), 1);
      try {
        await this.client.deleteCheckpoint(entry.path);
        this.deleted += 1;
      } catch {
        this.failedDeletes += 1;
      }
    }
  }

  summary(): StorageSummary {
    return {
      kept: this.saved.map((entry) => ({ ...entry })),
      deleted: this.deleted,
      failedDeletes: this.failedDeletes,
    };
  }

  /** One line per kept checkpoint, e.g. for the end of `agentrl train`. */
  describe(): string {
    const { kept, deleted, failedDeletes } = this.summary();
    const lines = kept.map(
      (entry) =>
        `  ${entry.path} (${entry.kind === 'weights' ? 'training checkpoint' : 'sampler weights'}, ${
          entry.ttlSeconds === undefined ? 'kept until deleted' : `expires ${entry.ttlSeconds} s after saving`
        })`,
    );
    const header = `tinker: ${kept.length} checkpoint${kept.length === 1 ? '' : 's'} kept on the server, ${deleted} stale sampler weights deleted${
      failedDeletes > 0 ? `, ${failedDeletes} deletes refused (their TTL still applies)` : ''
    }`;
    return [header, ...lines].join('\n');
  }
}
