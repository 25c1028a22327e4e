import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '../core/types.ts';
import { renderChat } from './chat-template.ts';
import { byteTokenizer } from './tokenizer.ts';
import { messagesFromTokens, tokenPieces } from './token-text.ts';

test('messagesFromTokens inverts the chat template; tokenPieces gives each token its text', () => {
  const messages: Message[] = [
    { role: 'system', content: 'Play FrozenLake.' },
    { role: 'user', content: 'P_\n_G' },
    { role: 'assistant', content: '<answer>Right</answer>' },
    { role: 'user', content: 'é done' },
  ];
  const { tokens } = renderChat(messages);
  assert.deepEqual(messagesFromTokens(tokens, byteTokenizer), messages);
  // Cut inside the reply: the partial assistant message is kept.
  const cut = renderChat(messages.slice(0, 2)).tokens.concat([byteTokenizer.specialTokens.assistant, ...byteTokenizer.encode('<ans')]);
  assert.deepEqual(messagesFromTokens(cut, byteTokenizer).at(-1), { role: 'assistant', content: '<ans' });
  const pieces = tokenPieces([byteTokenizer.specialTokens.user, ...byteTokenizer.encode('aé')], byteTokenizer);
  assert.deepEqual(pieces, ['<|user|>', 'a', '', 'é']);
});
