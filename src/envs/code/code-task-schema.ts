/**
 * The code tasks `reset` accepts from outside (a trainer's own tasks, or a client of the env
 * server): the shape of `CodeTask` with every size bounded, so a client cannot ask for 20,000
 * tests or a megabyte of spec. The shipped tasks all fit (code.test.ts checks).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../core/errors.ts';
import type { CodeTask } from './code-task.ts';

/** Bounds of a client task; `maxTests` is the env's option. */
export interface CodeTaskLimits {
  maxTests: number;
  /** The tests as JSON text, at most this many characters. Default 100 000. */
  maxTestsChars?: number;
}

const jsonValue = z.json();

export function codeTaskSchema({ maxTests, maxTestsChars = 100_000 }: CodeTaskLimits): z.ZodType<CodeTask> {
  return z.strictObject({
    id: z.string().min(1).max(100),
    signature: z
      .string()
      .max(200)
      .regex(/^[A-Za-z_$][\w$]*\([^()]*\)$/, 'a signature is name(arguments), e.g. add(a, b)'),
    spec: z.string().min(1).max(2000),
    tests: z
      .array(z.tuple([z.array(jsonValue), jsonValue]))
      .min(1)
      .max(maxTests)
      .refine((tests) => JSON.stringify(tests).length <= maxTestsChars, {
        message: `the tests must be at most ${maxTestsChars} characters as JSON`,
      }),
    solution: z.string().max(20_000).default(''),
  }) as z.ZodType<CodeTask>;
}

/** `task` checked against `schema`, or an `InvalidArgumentError` listing what is wrong with it. */
export function readCodeTask(schema: z.ZodType<CodeTask>, task: unknown): CodeTask {
  const parsed = schema.safeParse(task);
  if (!parsed.success)
    throw new InvalidArgumentError(`code task: ${z.prettifyError(parsed.error)}`, { issues: parsed.error.issues });
  return parsed.data;
}
