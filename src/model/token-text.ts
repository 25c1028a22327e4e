/**
 * Token ids back to readable structure, for viewers and exports (never for training — training
 * keeps the ids): the text of each token, and the chat messages a chat-template rendering holds.
 */
import type { Message, Role } from '../core/types.ts';
import { StreamingDecoder, type Tokenizer } from './tokenizer.ts';

/**
 * The text each token completes, in order (special tokens as `<|…|>`). A character spread over
 * several byte tokens appears on its last byte; the earlier bytes get ''.
 */
export function tokenPieces(tokens: readonly number[], tokenizer: Tokenizer): string[] {
  const decoder = new StreamingDecoder(tokenizer);
  return tokens.map((id) => decoder.push(id));
}

/**
 * The messages of a chat-template rendering (`<|role|>content<|end|>` …), e.g. a whole trajectory.
 * An unfinished last message (cut by the context window) is kept as far as it goes.
 */
export function messagesFromTokens(tokens: readonly number[], tokenizer: Tokenizer): Message[] {
  const special = tokenizer.specialTokens;
  const roles = new Map<number, Role>([
    [special.system, 'system'],
    [special.user, 'user'],
    [special.assistant, 'assistant'],
    [special.tool, 'tool'],
  ]);
  const messages: Message[] = [];
  let role: Role | undefined;
  let body: number[] = [];
  const close = () => {
    if (role !== undefined) messages.push({ role, content: tokenizer.decode(body, { skipSpecialTokens: true }) });
    role = undefined;
    body = [];
  };
  for (const id of tokens) {
    const next = roles.get(id);
    if (next !== undefined) {
      close();
      role = next;
    } else if (id === special.end) close();
    else if (role !== undefined) body.push(id);
  }
  close();
  return messages;
}
