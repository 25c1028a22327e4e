/**
 * STaR's hint as earlier turns (src/train/star.ts, step 2): the task replayed with a few solved
 * exchanges before its first observation, rendered by the policy's own chat template
 * (src/chat/earlier-turns.ts) — the same task and seed, so the env still checks the reply against
 * its own answer; only the first observation's text changes.
 *
 * The turns come from a chat file in the OpenAI messages format (src/train/chat-data.ts), one
 * conversation: user / assistant (with `tool_calls`) / tool messages, starting with a user turn
 * and ending with the assistant's, no system message (the env's instructions stay the system
 * prompt). `agentrl train --star-hint <file>` reads it.
 */
import { earlierTurnsText } from '../chat/earlier-turns.ts';
import type { ChatFormat } from '../chat/chat-format.ts';
import { DataFormatError } from '../core/errors.ts';
import type { Env, Message } from '../core/types.ts';
import { at } from '../core/indexing.ts';
import { readChatJsonl } from './chat-data.ts';

/** `make`'s env with `turns` rendered before its first observation (later observations untouched). */
export function withEarlierTurns<Task>(
  make: () => Env<Task>,
  turns: readonly Message[],
  format: ChatFormat,
): () => Env<Task> {
  return () => {
    const env = make();
    const reset = env.reset.bind(env);
    env.reset = async (options) => {
      const observation = await reset(options);
      return { ...observation, text: earlierTurnsText(format, turns, observation.text) };
    };
    return env;
  };
}

/** The earlier turns of a STaR hint file (see the header); a file of any other shape is a DataFormatError naming it. */
export async function readStarHint(file: string): Promise<Message[]> {
  const conversations = await readChatJsonl(file);
  const fail = (what: string): never => {
    throw new DataFormatError(`--star-hint ${file}: ${what}`, { file });
  };
  if (conversations.length !== 1)
    fail(`holds ${conversations.length} conversations; a hint is one (the earlier turns, one JSON line)`);
  const turns = at(conversations, 0, 'hint conversations').messages;
  const first = at(turns, 0, 'hint turns');
  if (turns.some((turn) => turn.role === 'system'))
    fail("a system message: the hint's turns come after the env's instructions (its system prompt)");
  if (first.role !== 'user' || first.content.trim() === '')
    fail('the first turn must be a user message with text (the question of an earlier exchange)');
  if (at(turns, turns.length - 1, 'hint turns').role === 'user')
    fail("the last turn is a user message: the task's own question follows the hint");
  return turns;
}
