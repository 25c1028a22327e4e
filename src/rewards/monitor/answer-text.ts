/**
 * Reading answers and observations as text, for the monitor's copy checks.
 *
 * - The answer of a reply is its `<answer>…</answer>` block when it has one (the action format of
 *   every text env, envs/action-format.ts), else the reply with its `<think>…</think>` block left out.
 * - Text is compared normalised: lower case, runs of white space as one space, trimmed.
 * - A tool's output is what an observation carries inside `<tool_response>…</tool_response>` or
 *   `<information>…</information>` (the tool-task envs' renderings, envs/tool-task.ts); an
 *   observation without those tags that follows a reply with a `<tool_call>` is all tool output.
 * - A phrase occurs in a text when it is found there with no letter or digit right before or after
 *   it (so the answer `12` is not found in `123`).
 */

/** Lower case, white space collapsed, trimmed. */
export function normalizeText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

const answerBlock = /<answer>([\s\S]*?)<\/answer>/;
const thinkBlock = /<think>[\s\S]*?(<\/think>|$)/g;

/** A reply's answer, normalised: the `<answer>` block's content, else the reply without its `<think>` block. */
export function answerOf(reply: string): string {
  const block = answerBlock.exec(reply);
  return normalizeText(block?.[1] ?? reply.replace(thinkBlock, ''));
}

const toolBlock = /<(tool_response|information)>([\s\S]*?)<\/\1>/g;
const hasToolBlock = /<(tool_response|information)>[\s\S]*?<\/\1>/;

/** Whether a reply called a tool in the text action format. */
export function callsTool(reply: string): boolean {
  return reply.includes('<tool_call>');
}

/** The tool outputs an observation carries, normalised (see the header for what counts). */
export function toolOutputsOf(observation: string, afterToolCall: boolean): string[] {
  const blocks = [...observation.matchAll(toolBlock)].map((match) => normalizeText(match[2] ?? ''));
  if (blocks.length > 0) return blocks;
  return afterToolCall ? [normalizeText(observation)] : [];
}

/** The observation without its tool outputs, normalised: what the env itself said. */
export function ownTextOf(observation: string, afterToolCall: boolean): string {
  if (afterToolCall && !hasToolBlock.test(observation)) return '';
  return normalizeText(observation.replace(toolBlock, ' '));
}

const wordCharacter = /[\p{L}\p{N}]/u;

/** Whether `phrase` occurs in `text` with no letter or digit right before or after it (both normalised). */
export function containsPhrase(text: string, phrase: string): boolean {
  if (phrase === '') return false;
  for (let from = text.indexOf(phrase); from !== -1; from = text.indexOf(phrase, from + 1)) {
    const before = text[from - 1];
    const after = text[from + phrase.length];
    const startsClean = before === undefined || !wordCharacter.test(before) || !wordCharacter.test(phrase[0] ?? '');
    const endsClean =
      after === undefined || !wordCharacter.test(after) || !wordCharacter.test(phrase[phrase.length - 1] ?? '');
    if (startsClean && endsClean) return true;
  }
  return false;
}
