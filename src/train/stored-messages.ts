/**
 * The messages a run store keeps of a trajectory, read back from its ids with the run's OWN
 * tokenizer (the policy's). agentrl's byte template has role-header tokens, so its messages are
 * exact (`messagesFromTokens`). A model's own tokenizer has none (tokenizer-json.ts maps the
 * byte-template role names onto its end token) and its template's markup differs per family, so
 * its messages are the trajectory's spans by loss mask: each generated span (lossMask 1) is an
 * `assistant` message, each span in between (the rendered system prompt, user turns and tool
 * observations, template markup included) a `user` message. Ids past the tokenizer read as U+FFFD.
 */
import type { Message } from '../core/types.ts';
import type { Tokenizer } from '../chat/tokenizer.ts';
import { messagesFromTokens } from '../policy/scripted-policy.ts';
import { decodeGenerated } from '../policy/request.ts';

/** True when the tokenizer has agentrl's byte-template role tokens (distinct from its end token). */
export function hasRoleTokens(tokenizer: Tokenizer): boolean {
  const special = tokenizer.specialTokens;
  return special.user !== special.end && special.assistant !== special.end;
}

export function storedMessages(
  tokens: readonly number[],
  lossMask: readonly number[],
  tokenizer: Tokenizer,
): Message[] {
  if (hasRoleTokens(tokenizer)) return messagesFromTokens(tokens, tokenizer, { includeUnfinished: true });
  const messages: Message[] = [];
  let start = 0;
  for (let index = 1; index <= tokens.length; index++) {
    const generated = (lossMask[start] ?? 0) > 0;
    if (index < tokens.length && (lossMask[index] ?? 0) > 0 === generated) continue;
    messages.push({
      role: generated ? 'assistant' : 'user',
      content: decodeGenerated(tokenizer, tokens.slice(start, index)),
    });
    start = index;
  }
  return messages;
}
