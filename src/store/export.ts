/**
 * Trajectory export for other trainers (TRL, verl, OpenRLHF …): one row per sampled episode, as
 * JSON Lines or Parquet, in the schema documented in docs/trajectory-export.md:
 *
 *   run, step, index, group_id, seed, data_source       where the row came from
 *   messages, prompt, completion                        chat format (role, content)
 *   input_ids, attention_mask, loss_mask                token level (ids end to end)
 *   logprobs, token_rewards, advantages                 token level (advantages null if not trained on)
 *   reward, success, truncated, num_turns               episode level
 *   reward_components, reward_failures                  the rubric's named parts (null without one)
 *
 * Files are written to a temp file and renamed into place, so a reader never sees half a file.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { basename, dirname, join } from 'node:path';
import { ParquetWriter, fileWriter } from 'hyparquet-writer';
import { at } from '../core/indexing.ts';
import type { Message } from '../core/types.ts';
import type { RunRecord, TrajectoryRecord } from './types.ts';

export type ExportFormat = 'jsonl' | 'parquet';

export interface ExportRow {
  run: string;
  step: number;
  index: number;
  group_id: string;
  seed: number;
  data_source: string;
  messages: Pick<Message, 'role' | 'content'>[];
  prompt: Pick<Message, 'role' | 'content'>[];
  completion: Pick<Message, 'role' | 'content'>[];
  input_ids: number[];
  attention_mask: number[];
  loss_mask: number[];
  logprobs: number[];
  token_rewards: number[];
  advantages: number[] | null;
  reward: number;
  success: boolean;
  truncated: boolean;
  num_turns: number;
  /** The episode's named reward components (summed over its steps), sorted by name; null when none were recorded. */
  reward_components: { name: string; value: number }[] | null;
  /** Components that failed (threw or were not finite), with the reason; null when none failed. */
  reward_failures: { name: string; error: string }[] | null;
}

function namedEntries<V, K extends string>(record: Record<string, V> | undefined, key: K) {
  if (record === undefined) return null;
  const names = Object.keys(record).sort();
  if (names.length === 0) return null;
  return names.map((name) => ({ name, [key]: record[name] }) as { name: string } & Record<K, V>);
}

export function exportRow(run: RunRecord, t: TrajectoryRecord): ExportRow {
  const messages = t.messages.map(({ role, content }) => ({ role, content }));
  const firstReply = messages.findIndex((m) => m.role === 'assistant');
  const split = firstReply < 0 ? messages.length : firstReply;
  return {
    run: run.name,
    step: t.step,
    index: t.index,
    group_id: t.groupId,
    seed: t.seed,
    data_source: `agentrl/${String(run.config.env ?? 'unknown')}`,
    messages,
    prompt: messages.slice(0, split),
    completion: messages.slice(split),
    input_ids: t.tokens,
    attention_mask: t.tokens.map(() => 1),
    loss_mask: t.lossMask,
    logprobs: t.logprobs,
    token_rewards: t.rewards,
    advantages: t.advantages,
    reward: t.totalReward,
    success: t.success,
    truncated: t.truncated,
    num_turns: t.turns.length,
    reward_components: namedEntries(t.rewardComponents, 'value'),
    reward_failures: namedEntries(t.rewardFailures, 'error'),
  };
}

export interface ExportOptions {
  run: RunRecord;
  trajectories: Iterable<TrajectoryRecord>;
  format: ExportFormat;
  out: string;
  /** Rows per Parquet row group (and per progress report). */
  batchSize?: number;
  onProgress?: (rowsWritten: number) => void;
}

/** Writes the run's trajectories; returns the number of rows. */
export async function exportTrajectories({
  run,
  trajectories,
  format,
  out,
  batchSize = 256,
  onProgress,
}: ExportOptions): Promise<number> {
  const temp = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  try {
    const rows =
      format === 'jsonl'
        ? await writeJsonl(temp, run, trajectories, onProgress)
        : writeParquet(temp, run, trajectories, batchSize, onProgress);
    await rename(temp, out);
    return rows;
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

async function writeJsonl(
  file: string,
  run: RunRecord,
  trajectories: Iterable<TrajectoryRecord>,
  onProgress?: (rows: number) => void,
): Promise<number> {
  const stream = createWriteStream(file);
  let rows = 0;
  for (const t of trajectories) {
    if (!stream.write(`${JSON.stringify(exportRow(run, t))}\n`)) await once(stream, 'drain');
    if (++rows % 256 === 0) onProgress?.(rows);
  }
  stream.end();
  await once(stream, 'finish');
  onProgress?.(rows);
  return rows;
}

const utf8 = { type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' } as const;

function listOf(name: string, element: Record<string, unknown>, optional = false): Record<string, unknown>[] {
  return [
    { name, repetition_type: optional ? 'OPTIONAL' : 'REQUIRED', num_children: 1, converted_type: 'LIST' },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', repetition_type: 'REQUIRED', ...element },
  ];
}

function messagesColumn(name: string): Record<string, unknown>[] {
  return [...listOf(name, { num_children: 2 }), { name: 'role', ...utf8 }, { name: 'content', ...utf8 }];
}

/** A nullable LIST<STRUCT<name UTF8, {field}>>. */
function namedColumn(name: string, field: Record<string, unknown>): Record<string, unknown>[] {
  return [...listOf(name, { num_children: 2 }, true), { name: 'name', ...utf8 }, field];
}

/** The Parquet schema: standard 3-level LISTs, messages as a LIST of STRUCT<role, content>. */
export const parquetSchema = [
  { name: 'root', num_children: 21 },
  { name: 'run', ...utf8 },
  { name: 'step', type: 'INT32', repetition_type: 'REQUIRED' },
  { name: 'index', type: 'INT32', repetition_type: 'REQUIRED' },
  { name: 'group_id', ...utf8 },
  { name: 'seed', type: 'INT64', repetition_type: 'REQUIRED' },
  { name: 'data_source', ...utf8 },
  ...messagesColumn('messages'),
  ...messagesColumn('prompt'),
  ...messagesColumn('completion'),
  ...listOf('input_ids', { type: 'INT32' }),
  ...listOf('attention_mask', { type: 'INT32' }),
  ...listOf('loss_mask', { type: 'INT32' }),
  ...listOf('logprobs', { type: 'DOUBLE' }),
  ...listOf('token_rewards', { type: 'DOUBLE' }),
  ...listOf('advantages', { type: 'DOUBLE' }, true),
  { name: 'reward', type: 'DOUBLE', repetition_type: 'REQUIRED' },
  { name: 'success', type: 'BOOLEAN', repetition_type: 'REQUIRED' },
  { name: 'truncated', type: 'BOOLEAN', repetition_type: 'REQUIRED' },
  { name: 'num_turns', type: 'INT32', repetition_type: 'REQUIRED' },
  ...namedColumn('reward_components', { name: 'value', type: 'DOUBLE', repetition_type: 'REQUIRED' }),
  ...namedColumn('reward_failures', { name: 'error', ...utf8 }),
];

/** The top-level column names, in schema order (each subtree of the flattened schema skipped). */
const columns: (keyof ExportRow)[] = [];
for (let i = 1; i < parquetSchema.length; i = subtreeEnd(i))
  columns.push(at(parquetSchema, i, 'parquet schema').name as keyof ExportRow);

function subtreeEnd(start: number): number {
  let next = start + 1;
  for (let child = 0; child < ((parquetSchema[start] as { num_children?: number }).num_children ?? 0); child++)
    next = subtreeEnd(next);
  return next;
}

function writeParquet(
  file: string,
  run: RunRecord,
  trajectories: Iterable<TrajectoryRecord>,
  batchSize: number,
  onProgress?: (rows: number) => void,
): number {
  const writer = new ParquetWriter({ writer: fileWriter(file), schema: parquetSchema as never, createdBy: 'agentrl' });
  let batch: ExportRow[] = [];
  let rows = 0;
  const flush = () => {
    if (batch.length === 0) return;
    const rowsInBatch = batch;
    writer.write({
      columnData: columns.map((name) => ({
        name,
        data: rowsInBatch.map((row) => (name === 'seed' ? BigInt(row.seed) : row[name])) as never,
      })),
      rowGroupSize: batch.length,
    });
    rows += batch.length;
    batch = [];
    onProgress?.(rows);
  };
  for (const t of trajectories) {
    batch.push(exportRow(run, t));
    if (batch.length >= batchSize) flush();
  }
  flush();
  writer.finish();
  return rows;
}
