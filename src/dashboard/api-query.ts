/**
 * The dashboard API's query strings and path segments, checked with zod before the store is read:
 * a value out of range, fractional, negative, not a number, or a parameter the path does not take
 * is an InvalidArgumentError (answered 400) naming the parameter and what it accepts — never a
 * SQLite error (500) deeper down. An empty value (`?step=`) is the same as an absent one.
 *
 *   metrics        after (step ≥ 0), maxPoints (1 … 1,000,000)
 *   trajectories   step (≥ 0), group (text), minReward / maxReward (finite), success (true|false),
 *                  offset (≥ 0), limit (1 … 500)
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';

/** A whole number in [min, max], written as digits only (no sign, exponent, fraction or spaces). */
function wholeNumber(min: number, max: number) {
  const range = `must be in [${min}, ${max}]`;
  return z
    .string()
    .regex(/^\d{1,16}$/, `must be a whole number in [${min}, ${max}]`)
    .transform(Number)
    .pipe(z.number().int(range).min(min, range).max(max, range));
}

const stepNumber = wholeNumber(0, Number.MAX_SAFE_INTEGER);

const finiteNumber = z
  .string()
  .regex(/\S/, 'must be a finite number')
  .transform(Number)
  .pipe(z.number({ error: 'must be a finite number' }).finite('must be a finite number'));

/** The paths that take no query parameter. */
export const noQuerySchema = z.strictObject({});

export const metricsQuerySchema = z.strictObject({
  after: stepNumber.optional(),
  maxPoints: wholeNumber(1, 1_000_000).optional(),
});

export const trajectoriesQuerySchema = z
  .strictObject({
    step: stepNumber.optional(),
    group: z.string().max(1000).optional(),
    minReward: finiteNumber.optional(),
    maxReward: finiteNumber.optional(),
    success: z
      .enum(['true', 'false'])
      .transform((text) => text === 'true')
      .optional(),
    offset: stepNumber.optional(),
    limit: wholeNumber(1, 500).optional(),
  })
  .transform(({ group, ...rest }) => ({ ...rest, groupId: group }));

/** The query of `path` checked against `schema`; no parameter at all where the path takes none. */
export function parseQuery<Schema extends z.ZodType>(
  schema: Schema,
  query: URLSearchParams,
  path: string,
): z.output<Schema> {
  const present = Object.fromEntries([...query].filter(([, value]) => value !== ''));
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === 'unrecognized_keys')
    throw new InvalidArgumentError(
      `${path} takes no query parameter ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}; allowed: ${allowedKeys(schema)}`,
      { path, keys: issue.keys },
    );
  const key = String(issue?.path[0] ?? '');
  throw new InvalidArgumentError(
    `query parameter ${key}=${JSON.stringify(present[key] ?? '')} ${issue?.message ?? 'is not valid'}`,
    { path, key, text: present[key] },
  );
}

function allowedKeys(schema: z.ZodType): string {
  const shape = (schema instanceof z.ZodPipe ? schema.in : schema) as z.ZodType;
  const keys = shape instanceof z.ZodObject ? Object.keys(shape.shape) : [];
  return keys.length > 0 ? keys.join(', ') : 'none';
}

/** A path segment that must be a step or trajectory index (a whole number ≥ 0). */
export function pathNumber(text: string | undefined, what: string): number {
  const parsed = stepNumber.safeParse(text ?? '');
  if (!parsed.success)
    throw new InvalidArgumentError(`${what} ${JSON.stringify(text ?? '')} must be a whole number ≥ 0`, { what, text });
  return parsed.data;
}

/** A percent-decoded path segment; a malformed escape (`%E0%A4%A`) is an InvalidArgumentError, not a URIError. */
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new InvalidArgumentError(`path segment ${JSON.stringify(segment)} has a malformed percent escape`, {
      segment,
    });
  }
}
