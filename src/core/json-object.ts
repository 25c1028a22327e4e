/**
 * A JSON object with any string keys, for free-form fields of the wire formats (an action's
 * `metadata`, a tool call's `arguments`, JSON-RPC `params`).
 *
 * Not `z.record(z.string(), z.unknown())`: zod 4's record check (`util.isPlainObject`) reads the
 * input's `constructor` property, so a JSON object with the key `constructor` fails it —
 * `{"constructor": null}` throws a TypeError out of `safeParse`, `{"constructor": 1}` is rejected —
 * and its output drops a `__proto__` key. Here every key is an ordinary key: the object JSON.parse
 * built is passed through unchanged (its `__proto__` key is an own data property, so nothing is
 * polluted), and the JSON Schema stays `{"type": "object"}`.
 */
import { z } from 'zod';

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const jsonObjectSchema = (
  z.unknown().refine(isJsonObject, { error: 'expected a JSON object' }) as unknown as z.ZodType<Record<string, unknown>>
).meta({ type: 'object', additionalProperties: {} });
