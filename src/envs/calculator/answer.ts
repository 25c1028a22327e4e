/**
 * Reading a chat model's final reply the way it writes one: the answer is the reply's last
 * integer (`37 * 23 = **851**.` → 851), with thousands separators (`1,234`) read. A minus right
 * before it makes it negative unless the minus is a binary operator (`3 - 5` → 5, `= -5` → −5).
 */

const integerPattern = /\d{1,3}(?:,\d{3})+(?!\d)|\d+/g;

/** The last integer in `text`, or null when there is none (or it is not a safe integer). */
export function lastInteger(text: string): number | null {
  let last: RegExpExecArray | null = null;
  for (let match = integerPattern.exec(text); match !== null; match = integerPattern.exec(text)) last = match;
  integerPattern.lastIndex = 0;
  if (last === null) return null;
  const magnitude = Number(last[0].replace(/,/g, ''));
  if (!Number.isSafeInteger(magnitude)) return null;
  const before = text.slice(0, last.index);
  const negative = /-$/.test(before) && !/[\d)]\s*-$/.test(before);
  return negative ? -magnitude || 0 : magnitude;
}
