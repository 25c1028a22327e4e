/**
 * mcp-files expert: reads the note with the server's read_text_file tool, then answers the code
 * word from what it read. A random turn answers a random word of the prompt's file name.
 */
import { formatAnswer, formatToolCall } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData } from '../require-data.ts';
import type { McpFilesData } from './files-env.ts';

export function mcpFilesExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { task, lastToolResult } = requireData<McpFilesData>(observation, 'mcp-files', 'task');
      const word = lastToolResult?.match(/code word is (\w+)/)?.[1];
      return word === undefined
        ? formatToolCall({ name: 'read_text_file', arguments: { path: task.file } })
        : formatAnswer(word);
    },
    (observation, rng) =>
      formatAnswer(rng.pick(requireData<McpFilesData>(observation, 'mcp-files', 'task').task.file.split(/[/.-]/))),
  );
}
