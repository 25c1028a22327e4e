/**
 * Token ids back to the text of each token, for viewers (never for training — training keeps
 * the ids). The messages of a rendering: `messagesFromTokens` in policy/scripted-policy.ts.
 */
import { StreamingDecoder, type Tokenizer } from './tokenizer.ts';

/**
 * The text each token completes, in order (special tokens as `<|…|>`). A character spread over
 * several byte tokens appears on its last byte; the earlier bytes get ''.
 */
export function tokenPieces(tokens: readonly number[], tokenizer: Tokenizer): string[] {
  const decoder = new StreamingDecoder(tokenizer);
  // A spare id the tokenizer lacks (the model's vocabulary may be larger) reads as U+FFFD.
  return tokens.map((id) => (id >= tokenizer.vocabSize ? `${decoder.flush()}\uFFFD` : decoder.push(id)));
}
