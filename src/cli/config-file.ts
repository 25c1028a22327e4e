/**
 * Config files for commands: a YAML (or JSON, which is YAML) mapping of the same options as the
 * command's flags, keys in camelCase or kebab-case:
 *
 *   # grpo-bandit.yaml
 *   env: bandit
 *   algo: grpo
 *   learningRate: 2e-3
 *
 * Every value is checked by the command's zod schema. Errors name the file, the line:column, the
 * key, the problem and the allowed values (all errors at once). Flags override file values.
 */
import { readFileSync } from 'node:fs';
import { LineCounter, isMap, isScalar, parseDocument, type Node } from 'yaml';
import type { z } from 'zod';
import { DataFormatError, InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { fieldsOf, parseFlags, validateFlags } from './flags.ts';

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** One problem in a config file, located. */
export interface ConfigIssue {
  line: number;
  column: number;
  key: string;
  message: string;
}

export class ConfigFileError extends DataFormatError {
  readonly issues: ConfigIssue[];
  constructor(file: string, issues: ConfigIssue[]) {
    super(issues.map((i) => `${file}:${i.line}:${i.column}: ${i.key ? `${i.key}: ` : ''}${i.message}`).join('\n'), {
      file,
      line: issues[0]?.line,
      key: issues[0]?.key,
    });
    this.issues = issues;
  }
}

function camel(key: string): string {
  return key.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Reads `file` as options for `schema` (validated key by key; defaults not applied). `exclude`
 * lists keys a file may not set (such as the `config` flag itself).
 */
export function readConfigFile<T extends AnyObject>(
  file: string,
  schema: T,
  { exclude = [] }: { exclude?: readonly string[] } = {},
): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`--config ${file}: cannot read (${(error as Error).message})`, { file });
  }
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const at = (node: Node | null | undefined) => lineCounter.linePos(node?.range?.[0] ?? 0);
  if (document.errors.length > 0) {
    throw new ConfigFileError(
      file,
      document.errors.map((e) => ({
        line: e.linePos?.[0].line ?? 1,
        column: e.linePos?.[0].col ?? 1,
        key: '',
        message: `YAML syntax error: ${e.message.split('\n')[0]}`,
      })),
    );
  }
  if (document.contents === null) return {};
  if (!isMap(document.contents)) {
    const { line, col } = at(document.contents);
    throw new ConfigFileError(file, [
      { line, column: col, key: '', message: 'the file must be a mapping of option: value' },
    ]);
  }
  const fields = fieldsOf(schema).filter((f) => !exclude.includes(f.key));
  const known = new Map(fields.map((f) => [f.key, f]));
  const values: Record<string, unknown> = {};
  const issues: ConfigIssue[] = [];
  for (const pair of document.contents.items) {
    const keyNode = pair.key as Node;
    const { line, col: column } = at(keyNode);
    const rawKey = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
    const key = camel(rawKey);
    const field = known.get(key);
    if (field === undefined) {
      const near = nearest(key, [...known.keys()]);
      issues.push({
        line,
        column,
        key: rawKey,
        message: `unknown key${near ? ` (did you mean ${near}?)` : ''}; allowed keys: ${[...known.keys()].join(', ')}`,
      });
      continue;
    }
    const valueNode = pair.value as Node | null;
    let value = valueNode === null ? null : (valueNode as { toJSON(): unknown }).toJSON();
    // A JSON-text option (such as envOptions) may be written as a mapping in the file.
    if (field.kind === 'string' && typeof value === 'object' && value !== null) value = JSON.stringify(value);
    const result = (schema.shape[key] as z.ZodType).safeParse(value);
    if (!result.success) {
      const position = valueNode === null ? { line, col: column } : at(valueNode);
      const allowed = field.values ? ` (allowed: ${field.values.join(', ')})` : '';
      for (const issue of result.error.issues) {
        issues.push({
          line: position.line,
          column: position.col,
          key,
          message: `${issue.message}${allowed}; got ${JSON.stringify(value)}`,
        });
      }
      continue;
    }
    values[key] = value;
  }
  if (issues.length > 0) throw new ConfigFileError(file, issues);
  return values;
}

/**
 * A command's options from its argv: `--config <file>` values first, then the flags over them,
 * validated as a whole by the schema. The schema must have a `config` field.
 */
export function resolveOptions<T extends AnyObject>(
  schema: T,
  argv: readonly string[],
  {
    base = {},
    baseSource = 'the base',
    exclude = [],
  }: { base?: Record<string, unknown>; baseSource?: string; exclude?: readonly string[] } = {},
): { options: z.infer<T>; positional: string[]; sources: Record<string, string> } {
  const { values: flags, positional } = parseFlags(schema, argv);
  const file =
    typeof flags.config === 'string' ? readConfigFile(flags.config, schema, { exclude: ['config', ...exclude] }) : {};
  const sources: Record<string, string> = {};
  for (const key of Object.keys(base)) sources[key] = baseSource;
  for (const key of Object.keys(file)) sources[key] = `--config ${flags.config as string}`;
  for (const key of Object.keys(flags)) sources[key] = 'the command line';
  return { options: validateFlags(schema, { ...base, ...file, ...flags }), positional, sources };
}

/** The closest known key by edit distance (for typos), if close enough. */
function nearest(key: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        at(previous, j) + 1,
        at(current, j - 1) + 1,
        at(previous, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return at(previous, b.length);
}
