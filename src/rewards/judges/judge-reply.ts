/**
 * Reading a judge's reply, strictly. The reply must be one JSON object — alone, or alone inside one
 * Markdown code fence (```json … ```), since many models fence JSON unasked; any other text around
 * it is a `malformed-reply` failure. A score must be a JSON number in [0, 1]: a string ("0.8"), a
 * non-finite value (`1e999` parses to Infinity; NaN is not JSON) is `malformed-reply`, and a number
 * outside [0, 1] is refused as `out-of-range` — not clamped, since a judge answering 7 has
 * misread the scale and its other scores cannot be trusted either.
 */
import { excerpt, JudgeError } from './judge-error.ts';

const fenced = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/;

/** The reply's JSON object; throws `JudgeError` (malformed-reply) for anything else. */
export function parseReplyObject(content: string, judge: string): Record<string, unknown> {
  const trimmed = content.trim();
  const inner = fenced.exec(trimmed)?.[1] ?? trimmed;
  let value: unknown;
  try {
    value = JSON.parse(inner);
  } catch {
    throw new JudgeError(`the reply is not one JSON object: ${excerpt(content)}`, {
      judge,
      reason: 'malformed-reply',
      excerpt: excerpt(content),
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new JudgeError(`the reply is JSON but not an object: ${excerpt(content)}`, {
      judge,
      reason: 'malformed-reply',
      excerpt: excerpt(content),
    });
  }
  return value as Record<string, unknown>;
}

/** A score in [0, 1]; `where` names it in the error (`"score"`, `trajectory "B"`). */
export function readScore(value: unknown, where: string, judge: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    const shown = typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value));
    throw new JudgeError(`${where}: ${shown} is not a finite JSON number`, {
      judge,
      reason: 'malformed-reply',
      excerpt: excerpt(shown),
    });
  }
  if (value < 0 || value > 1) {
    throw new JudgeError(`${where}: ${value} is outside [0, 1] (refused, not clamped)`, {
      judge,
      reason: 'out-of-range',
    });
  }
  return value;
}
