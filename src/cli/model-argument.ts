/**
 * The model positional argument of `serve-policy`, `gateway` and `export-hf`: anything
 * model/model-sources.ts resolves (a checkpoint or Hugging Face folder, a .gguf file, a pulled
 * model's name), and the model id a server lists for it by default.
 */
import { basename } from 'node:path';
import { InvalidArgumentError } from '../core/errors.ts';

/** What the argument may be, for usage lines. */
export const modelArgumentHelp = '<checkpoint folder | Hugging Face folder | file.gguf | pulled model name>';

/** The one positional argument: the model. */
export function modelArgument(positional: readonly string[], usage: string): string {
  const [only] = positional;
  if (positional.length !== 1 || only === undefined)
    throw new InvalidArgumentError(
      `expected one model ${modelArgumentHelp}, got ${positional.length === 0 ? 'none' : positional.join(' ')}: ${usage}`,
      { positional },
    );
  return only;
}

/** The model id a server lists by default: the folder's or file's name without `.gguf` (`smollm2-135m-instruct` for the pulled name). */
export function defaultModelName(source: string): string {
  const name = basename(source.replace(/[\\/]+$/, ''), '.gguf');
  return name === '' || name === '.' ? 'agentrl' : name;
}
