/**
 * mcp-files: an environment whose whole tool set comes from a real MCP server — the npm package
 * @modelcontextprotocol/server-filesystem, spawned over stdio on a generated workspace of notes
 * (notes/<name>.txt, each holding a code word). The task: "What is the code word in notes/x.txt?";
 * the agent calls the server's tools (read_text_file, list_directory, search_files, …) with
 * `<tool_call>` and answers `<answer>amber</answer>`. Reward 1 for the exact word (SQuAD
 * normalisation), else 0; −formatPenalty per invalid turn.
 *
 * The server lives as long as the env (`close()` ends it and removes the folder); envs can share
 * one workspace (`openFilesWorkspace`) to start the server once. The server's tools can write
 * (write_file, edit_file, move_file), so every episode starts on a fresh copy: `reset` removes
 * everything in the folder and writes the pristine notes again (`workspace.restore()`), and no
 * episode sees what an earlier one changed. Envs sharing a workspace must therefore not run
 * episodes at the same time.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Rng } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import type { ToolRun } from '../../core/tool.ts';
import { parseOptions } from '../options.ts';
import { exactMatch } from '../search/reward.ts';
import { SPLIT_SIZE } from '../split.ts';
import { ToolTaskEnv, toolTaskOptionsShape, type ToolTaskEpisode, type Verdict } from '../tool-task.ts';
import { answerRubric } from '../tool-task-rewards.ts';
import { connectMcp, type McpConnection } from './client.ts';

export const mcpFilesOptionsSchema = z.strictObject({
  ...toolTaskOptionsShape,
  /** Seed of the generated notes. */
  workspaceSeed: z.number().int().nonnegative().default(11),
  /** Notes in the workspace. */
  noteCount: z.number().int().min(1).max(500).default(24),
});
export type McpFilesOptions = z.input<typeof mcpFilesOptionsSchema>;

export interface FilesTask {
  file: string;
  answer: string;
}

export interface FilesWorkspace {
  folder: string;
  tasks: FilesTask[];
  connection: McpConnection;
  /** Removes everything in the folder and writes the pristine notes again (the start of an episode). */
  restore(): void;
  close(): Promise<void>;
}

const words = [
  'amber',
  'basalt',
  'cobalt',
  'dune',
  'ember',
  'fjord',
  'garnet',
  'harbor',
  'indigo',
  'juniper',
  'kelp',
  'lumen',
  'marrow',
  'nectar',
  'onyx',
  'pumice',
  'quartz',
  'russet',
  'sorrel',
  'tundra',
  'umber',
  'vellum',
  'willow',
  'yarrow',
  'zephyr',
];

/** Empties `folder` and writes the seeded notes into it; the tasks they hold. */
function writeNotes(folder: string, options: { workspaceSeed: number; noteCount: number }): FilesTask[] {
  for (const entry of readdirSync(folder)) rmSync(join(folder, entry), { recursive: true, force: true });
  const rng = new Rng(options.workspaceSeed);
  mkdirSync(join(folder, 'notes'));
  const tasks: FilesTask[] = [];
  for (let i = 0; i < options.noteCount; i++) {
    const file = `notes/${rng.pick(words)}-${i}.txt`;
    const answer = rng.pick(words);
    writeFileSync(join(folder, file), `Note ${i}.\nThe code word is ${answer}.\nFiled under ${rng.pick(words)}.\n`);
    tasks.push({ file, answer });
  }
  return tasks;
}

/** Writes the notes to a fresh folder and starts server-filesystem on it (stdio). */
export async function openFilesWorkspace(options: {
  workspaceSeed: number;
  noteCount: number;
}): Promise<FilesWorkspace> {
  const folder = mkdtempSync(join(tmpdir(), 'agentrl-mcp-'));
  const tasks = writeNotes(folder, options);
  const serverScript = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
  let connection: McpConnection;
  try {
    connection = await connectMcp({ command: process.execPath, args: [serverScript, folder], cwd: folder });
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    folder,
    tasks,
    connection,
    restore: () => void writeNotes(folder, options),
    async close() {
      await connection.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** `observation.data`: what the agent may see — the task's file and the last tool result. */
export interface McpFilesData {
  task: Pick<FilesTask, 'file'>;
  lastToolResult: string | null;
}

/** `observation.privileged`: the code word (the answer). */
export type McpFilesPrivileged = Pick<FilesTask, 'answer'>;

interface FilesEpisode extends ToolTaskEpisode {
  task: FilesTask;
  lastToolResult: string | null;
}

export class McpFilesEnv extends ToolTaskEnv<FilesTask, FilesEpisode, z.output<typeof mcpFilesOptionsSchema>> {
  readonly name = 'mcp-files';
  /** R = solved (the right word: outcome) − formatPenalty · invalid_action (penalty). */
  readonly rewardComponents = answerRubric<FilesEpisode>(this.options.formatPenalty);
  readonly instructions =
    'Answer from the files, using the MCP filesystem tools (read_text_file, list_directory, search_files, ...): ' +
    '<tool_call>{"name": "read_text_file", "arguments": {"path": "notes/a.txt"}}</tool_call>. Then reply <answer>word</answer>.';
  private workspace: Promise<FilesWorkspace> | null;
  private readonly ownsWorkspace: boolean;

  constructor(options: McpFilesOptions = {}, shared?: { workspace: Promise<FilesWorkspace> }) {
    super(parseOptions(mcpFilesOptionsSchema, options, 'mcp-files'));
    this.workspace = shared?.workspace ?? null;
    this.ownsWorkspace = shared === undefined;
  }

  protected async start(seed: number, task: FilesTask | undefined): Promise<{ episode: FilesEpisode; text: string }> {
    this.workspace ??= openFilesWorkspace(this.options);
    const workspace = await this.workspace;
    workspace.restore();
    this.tools = workspace.connection.tools;
    const chosen = task ?? at(workspace.tasks, (seed % SPLIT_SIZE) % workspace.tasks.length, 'mcp-files tasks');
    return {
      episode: { task: chosen, lastToolResult: null, turnsUsed: 0, ended: false },
      text: `What is the code word in ${chosen.file}?`,
    };
  }

  /** Keeps the tool's result (null when it failed) for the expert. */
  protected override afterToolCall(episode: FilesEpisode, run: ToolRun): void {
    episode.lastToolResult = run.ok ? run.text : null;
  }

  protected async finish(episode: FilesEpisode, answer: string): Promise<Verdict> {
    const success = exactMatch(answer, episode.task.answer);
    return { success, text: success ? 'correct' : 'wrong' };
  }

  protected data(episode: FilesEpisode): McpFilesData {
    return { task: { file: episode.task.file }, lastToolResult: episode.lastToolResult };
  }

  protected override privileged(episode: FilesEpisode): McpFilesPrivileged {
    return { answer: episode.task.answer };
  }

  /** Stops the MCP server and removes the workspace (when this env started them). */
  async close(): Promise<void> {
    if (this.ownsWorkspace && this.workspace !== null) await (await this.workspace).close();
    this.workspace = null;
  }
}

export function makeMcpFiles(
  options: McpFilesOptions = {},
  shared?: { workspace: Promise<FilesWorkspace> },
): McpFilesEnv {
  return new McpFilesEnv(options, shared);
}
