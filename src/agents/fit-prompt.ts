/**
 * A one-message prompt built around text that may be too long for the context window (a
 * transcript to reflect on, messages to summarise): the text is cut from the front, keeping its
 * most recent part, until the rendered prompt fits `budget` tokens.
 */
import type { ChatFormat } from '../chat/chat-format.ts';
import { userPrompt } from '../chat/policy-chat-format.ts';

export const cutMarker = '[… earlier text cut to fit the context window]\n';

/**
 * The ids of user(build(part)) with the generation prompt, in `format` (the policy's chat format,
 * `chatFormatOf`), where part is `text`, or its longest tail (after
 * `cutMarker`) that fits in `budget` tokens; undefined when even the empty part does not fit.
 * Renders O(log n) times (a binary search over where the cut starts).
 */
export function fitUserPrompt({
  text,
  build,
  format,
  budget,
}: {
  text: string;
  build: (part: string) => string;
  format: ChatFormat;
  budget: number;
}): number[] | undefined {
  const render = (part: string) => userPrompt(format, build(part));
  const whole = render(text);
  if (whole.length <= budget) return whole;
  if (render(cutMarker).length > budget) return undefined;
  // The smallest cut start whose tail fits: tails only shrink as the start moves right.
  let fits = text.length; // start where the tail is empty
  let tooLong = 0;
  while (fits - tooLong > 1) {
    const middle = Math.floor((fits + tooLong) / 2);
    if (render(cutMarker + text.slice(middle)).length <= budget) fits = middle;
    else tooLong = middle;
  }
  return render(cutMarker + text.slice(fits));
}
