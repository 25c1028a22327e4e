/**
 * Command-line flags derived from a zod object schema: `--kebab-case value` sets the camelCase
 * key, values are coerced by the field's type (number, boolean, string, enum), and the help text
 * lists each field's description, type and default. Unknown flags are errors that list the known
 * ones; values are validated by the schema itself, so the messages match config-file errors.
 *
 * A boolean flag is `--x` or `--x true` (on), `--x false`, `--x=false` or `--no-x` (off); any
 * other value is an error. Arguments that are not flags are errors unless the command takes them.
 */
import type { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';

type AnyObject = z.ZodObject<z.ZodRawShape>;

interface FieldInfo {
  key: string;
  flag: string;
  kind: 'number' | 'boolean' | 'string' | 'enum' | 'other';
  values?: string[];
  /** The type help shows for a union (e.g. `all|number`), where `kind` is 'other'. */
  typeLabel?: string;
  description: string;
  defaultValue?: unknown;
}

export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function describeField(key: string, schema: z.ZodType): FieldInfo {
  let inner: any = schema;
  let defaultValue: unknown;
  const description = (schema as { description?: string }).description ?? '';
  for (;;) {
    const def = inner._zod.def;
    if (def.type === 'default') {
      defaultValue = typeof def.defaultValue === 'function' ? def.defaultValue() : def.defaultValue;
      inner = def.innerType;
    } else if (def.type === 'optional' || def.type === 'nullable') inner = def.innerType;
    else break;
  }
  const type = inner._zod.def.type as string;
  const info: FieldInfo = {
    key,
    flag: `--${kebab(key)}`,
    kind: 'other',
    description: description || inner.description || '',
    defaultValue,
  };
  info.typeLabel = unionLabel(inner);
  if (type === 'number' || type === 'int') info.kind = 'number';
  else if (type === 'boolean') info.kind = 'boolean';
  else if (type === 'string') info.kind = 'string';
  else if (type === 'enum') {
    info.kind = 'enum';
    info.values = Object.values(inner._zod.def.entries as Record<string, string>);
  }
  return info;
}

/** `all|number` for a union of literals and types (behind a preprocess pipe, as historyTurns). */
function unionLabel(schema: any): string | undefined {
  const def = schema._zod.def.type === 'pipe' ? schema._zod.def.out._zod.def : schema._zod.def;
  if (def.type !== 'union') return undefined;
  return def.options
    .map((option: any) =>
      option._zod.def.type === 'literal' ? option._zod.def.values.join('|') : option._zod.def.type,
    )
    .join('|');
}

export function fieldsOf(schema: AnyObject): FieldInfo[] {
  return Object.entries(schema.shape).map(([key, field]) => describeField(key, field as z.ZodType));
}

/** Parses `argv` into a partial object for `schema` (not yet validated) plus positional args. */
export function parseFlags(
  schema: AnyObject,
  argv: readonly string[],
): { values: Record<string, unknown>; positional: string[] } {
  const fields = new Map(fieldsOf(schema).map((f) => [f.flag, f]));
  const values: Record<string, unknown> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = at(argv, i, 'arguments');
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const negated = name.startsWith('--no-') ? fields.get(`--${name.slice(5)}`) : undefined;
    const field = fields.get(name) ?? negated;
    if (field === undefined) {
      throw new InvalidArgumentError(`unknown flag ${name}; known flags: ${[...fields.keys()].join(', ')}`, {
        flag: name,
      });
    }
    if (field.kind === 'boolean') {
      const next = argv[i + 1];
      const text = inline ?? (next === 'true' || next === 'false' ? argv[++i] : undefined);
      if (text !== undefined && text !== 'true' && text !== 'false') {
        throw new InvalidArgumentError(`flag ${name} takes true or false, got "${text}"`, {
          flag: name,
          allowed: ['true', 'false'],
        });
      }
      if (negated && text !== undefined)
        throw new InvalidArgumentError(`flag ${name} takes no value (it means --${name.slice(5)} false)`, {
          flag: name,
        });
      values[field.key] = negated ? false : text !== 'false';
      continue;
    }
    const raw = inline ?? argv[++i];
    if (raw === undefined) throw new InvalidArgumentError(`flag ${name} needs a value`, { flag: name });
    if (field.kind === 'number') {
      const n = Number(raw);
      if (!Number.isFinite(n))
        throw new InvalidArgumentError(`flag ${name} needs a number, got "${raw}"`, { flag: name });
      values[field.key] = n;
    } else values[field.key] = raw;
  }
  return { values, positional };
}

/**
 * Refuses arguments that are not flags (a command that takes none would silently drop them), with
 * the flag a value belongs to when it is one of an enum's values or of `candidates` (e.g. the env
 * names for `--env`): `agentrl train sokoban` → unexpected argument 'sokoban' (did you mean --env sokoban?).
 */
export function rejectPositional(
  schema: AnyObject,
  positional: readonly string[],
  candidates: Record<string, readonly string[]> = {},
): void {
  if (positional.length === 0) return;
  const known: [string, readonly string[]][] = [
    ...Object.entries(candidates).map(([flag, values]): [string, readonly string[]] => [flag, values]),
    ...fieldsOf(schema).flatMap((f): [string, readonly string[]][] => (f.values ? [[f.flag, f.values]] : [])),
  ];
  const described = positional.map((arg) => {
    const flag = known.find(([, values]) => values.includes(arg))?.[0];
    return `'${arg}'${flag ? ` (did you mean ${flag} ${arg}?)` : ''}`;
  });
  throw new InvalidArgumentError(
    `unexpected argument${positional.length > 1 ? 's' : ''} ${described.join(', ')}; this command takes only --flags (see --help)`,
    { positional },
  );
}

/** Validates with the schema; errors name the flag, the problem and the allowed values. */
export function validateFlags<T extends AnyObject>(schema: T, values: Record<string, unknown>): z.infer<T> {
  const result = schema.safeParse(values);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const key = issue.path.join('.');
    const field = fieldsOf(schema).find((f) => f.key === issue.path[0]);
    const allowed = field?.values ? ` (allowed: ${field.values.join(', ')})` : '';
    return `--${kebab(key)}: ${issue.message}${allowed}`;
  });
  throw new InvalidArgumentError(issues.join('\n'), { issues: result.error.issues });
}

/**
 * One line per flag: its type, description and default. With `effective` (the values that will
 * run and where each came from), a value that differs from the default is shown as the one that
 * runs, with its source: `(runs 5e-5 from the sokoban preset; default 0.0001)`.
 */
export function flagHelp(
  schema: AnyObject,
  effective: Record<string, { value: unknown; source: string }> = {},
): string {
  return fieldsOf(schema)
    .map((f) => {
      const type = f.kind === 'enum' ? (f.values ?? []).join('|') : (f.typeLabel ?? f.kind);
      const runs = effective[f.key];
      const fallback = f.defaultValue === undefined ? '' : `default ${JSON.stringify(f.defaultValue)}`;
      const shown =
        runs !== undefined && runs.value !== undefined && JSON.stringify(runs.value) !== JSON.stringify(f.defaultValue)
          ? ` (runs ${JSON.stringify(runs.value)} from ${runs.source}${fallback ? `; ${fallback}` : ''})`
          : fallback
            ? ` (${fallback})`
            : '';
      return `  ${`${f.flag} <${type}>`.padEnd(34)} ${f.description}${shown}`;
    })
    .join('\n');
}
