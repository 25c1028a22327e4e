/**
 * Environment options are zod objects (doc comment and default on every field). `parseOptions`
 * turns a zod failure into an `InvalidArgumentError` whose message lists the known options.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/index.ts';

export function parseOptions<Schema extends z.ZodObject>(
  schema: Schema,
  options: unknown,
  what: string,
): z.output<Schema> {
  const result = schema.safeParse(options ?? {});
  if (!result.success) {
    const known = Object.keys(schema.shape).join(', ');
    throw new InvalidArgumentError(`${what} options: ${z.prettifyError(result.error)}\nallowed options: ${known}`, {
      issues: result.error.issues,
    });
  }
  return result.data;
}
