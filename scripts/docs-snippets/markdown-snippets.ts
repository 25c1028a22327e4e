/**
 * The snippets of a markdown page, as a reader would copy them: each ```ts / ```typescript block
 * whole, each command of a ```bash / ```sh block (continuation lines joined, a heredoc kept with
 * its body, the trailing `# comment` dropped), the command lines of an unlabelled block, and every
 * other labelled block (python, …) whole, so that it too must be run or listed as skipped.
 */
import { at } from '../../src/core/indexing.ts';

export type SnippetKind = 'typescript' | 'shell' | 'other';

export interface Snippet {
  /** The page, relative to the repository: `README.md`, `docs/lora.md`. */
  page: string;
  /** 1-based line of the snippet's first line in the page. */
  line: number;
  kind: SnippetKind;
  /** The fence's language label ('' when unlabelled). */
  language: string;
  /** Which fenced block of the page it comes from (the commands of one block share a folder). */
  block: number;
  /** TypeScript: the block; shell: the command as it is run (comment dropped); other: the block. */
  text: string;
}

interface Fence {
  language: string;
  /** 1-based line of the block's first content line. */
  line: number;
  lines: string[];
}

/** The fenced blocks of `markdown`, in order. */
export function fencedBlocks(markdown: string): Fence[] {
  const blocks: Fence[] = [];
  let open: Fence | undefined;
  markdown.split('\n').forEach((text, index) => {
    const fence = /^```\s*([\w-]*)\s*$/.exec(text);
    if (open === undefined) {
      if (fence !== null) open = { language: at(fence, 1).toLowerCase(), line: index + 2, lines: [] };
    } else if (fence !== null && at(fence, 1) === '') {
      blocks.push(open);
      open = undefined;
    } else open.lines.push(text);
  });
  return blocks;
}

/** A line of an unlabelled block that is a command (the block may otherwise be program output). */
const commandStart = /^(npx |npm |node |agentrl |curl |pip |python |accelerate |tensorboard |TINKER_API_KEY=)/;

/** `text` without a trailing `# comment` (a `#` after whitespace, outside quotes). */
export function withoutComment(text: string): string {
  let quote: string | undefined;
  for (let index = 0; index < text.length; index += 1) {
    const character = text.charAt(index);
    if (quote !== undefined) {
      if (character === quote) quote = undefined;
    } else if (character === "'" || character === '"') quote = character;
    else if (character === '#' && (index === 0 || /\s/.test(text.charAt(index - 1)))) {
      return text.slice(0, index).trimEnd();
    }
  }
  return text.trimEnd();
}

/** The commands of a shell block with the line each starts on. */
export function shellCommands(lines: readonly string[], firstLine: number): Array<{ line: number; text: string }> {
  const commands: Array<{ line: number; text: string }> = [];
  let index = 0;
  while (index < lines.length) {
    const start = index;
    let text = withoutComment(at(lines, index));
    index += 1;
    const heredoc = /<<-?\s*'?(\w+)'?/.exec(text);
    if (heredoc !== null) {
      const end = lines.indexOf(at(heredoc, 1), index);
      const stop = end === -1 ? lines.length : end + 1;
      text = [text, ...lines.slice(index, stop)].join('\n');
      index = stop;
    }
    while (text.endsWith('\\') && index < lines.length) {
      text = `${text.slice(0, -1).trimEnd()} ${withoutComment(at(lines, index)).trim()}`;
      index += 1;
    }
    if (text.trim() !== '') commands.push({ line: firstLine + start, text: text.trim() });
  }
  return commands;
}

/** Every snippet of `markdown` (the page at `page`). */
export function markdownSnippets(page: string, markdown: string): Snippet[] {
  return fencedBlocks(markdown).flatMap(({ language, line, lines }, block): Snippet[] => {
    const base = { page, language, block };
    if (language === 'ts' || language === 'typescript') {
      return [{ ...base, line, kind: 'typescript', text: `${lines.join('\n')}\n` }];
    }
    if (language === 'bash' || language === 'sh' || language === 'shell') {
      return shellCommands(lines, line).map((command) => ({ ...base, ...command, kind: 'shell' }));
    }
    if (language === '') {
      return shellCommands(lines, line)
        .filter((command) => commandStart.test(command.text))
        .map((command) => ({ ...base, ...command, kind: 'shell' }));
    }
    return [{ ...base, line, kind: 'other', text: lines.join('\n') }];
  });
}
