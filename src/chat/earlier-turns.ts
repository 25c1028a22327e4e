/**
 * Earlier turns before a question, in a model's own chat markup: the template renders `turns`
 * then the question as one conversation, and the text from the first turn's content to the
 * question's end becomes the question text. Put in a user message, the tokenizer reads the
 * markup's special tokens back as tokens, so the model sees the turns as real earlier exchanges
 * (with its own structured tool calls), not as quoted text — a few-shot prompt in the model's
 * format. STaR's hint (src/train/star-hint.ts) and bench:real's prompt variants use it.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { Message } from '../core/types.ts';
import type { ChatFormat } from './chat-format.ts';

export function earlierTurnsText(format: ChatFormat, turns: readonly Message[], question: string): string {
  const rendered = format.tokenizer.decode(format.render([...turns, { role: 'user', content: question }]).tokens);
  const first = turns[0]?.content ?? '';
  const start = rendered.indexOf(first);
  const end = rendered.lastIndexOf(question);
  if (first === '' || start < 0 || end < start)
    throw new InvalidArgumentError(
      `earlier turns: the ${format.name} chat template does not render them as text before the question (the first turn needs text content)`,
    );
  return rendered.slice(start, end + question.length);
}
