import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byteTokenizer } from './tokenizer.ts';
import { tokenPieces } from './token-text.ts';

test('tokenPieces gives each token its text (a multi-byte character on its last byte)', () => {
  const pieces = tokenPieces([byteTokenizer.specialTokens.user, ...byteTokenizer.encode('aé')], byteTokenizer);
  assert.deepEqual(pieces, ['<|user|>', 'a', '', 'é']);
});
