/**
 * `agentrl export-hf <checkpoint> --out <dir>`: a trained built-in policy as a clean Hugging Face
 * model folder for `transformers`, vLLM, SGLang or llama.cpp's converter. The input is any model
 * source (model/model-sources.ts): a checkpoint, a Hugging Face folder, a .gguf file (dequantized
 * to float32) or a pulled model's name.
 *
 * An agentrl checkpoint already is a HF folder (model/checkpoint.ts writes config.json,
 * model.safetensors, tokenizer.json, tokenizer_config.json with the chat template,
 * generation_config.json). The export adds what a model hub upload expects and drops what only
 * training needs:
 *   - the PPO value head (`v_head.summary.*`) is left out: `LlamaForCausalLM` would report it as
 *     unexpected weights;
 *   - special_tokens_map.json; generation_config.json with the sampling defaults, max_length and
 *     `suppress_tokens` = the ids past the tokenizer's vocabulary (spare embedding rows), so
 *     transformers' `generate` never samples them;
 *   - README.md: a model card with the chat and tool-call formats and the GGUF conversion path.
 * The `agentrl` block stays in config.json (transformers ignores it), so agentrl loads the export
 * back bit-exactly.
 */
import { join } from 'node:path';
import { saveCheckpoint, writeFileAtomic } from '../model/checkpoint.ts';
import { loadModelCheckpoint } from '../model/model-sources.ts';
import { defaultArchitecture, type HfArchitecture } from '../model/hf-config.ts';
import { byteTokenizer, specialTokenText } from '../chat/tokenizer.ts';

export interface ExportHfOptions {
  /** Default: Qwen2ForCausalLM when the model has q/k/v biases, else LlamaForCausalLM. */
  architecture?: HfArchitecture;
  /** The model card title. Default: the output folder's name. */
  name?: string;
}

export interface ExportHfResult {
  files: string[];
  architecture: HfArchitecture;
  parameters: number;
}

/** `source`: a checkpoint or Hugging Face folder, a .gguf file or a pulled model's name (model/model-sources.ts). */
export async function exportHuggingFace(
  source: string,
  outDir: string,
  options: ExportHfOptions = {},
): Promise<ExportHfResult> {
  const checkpoint = await loadModelCheckpoint(source);
  const config = { ...checkpoint.config, valueHead: false };
  const params = new Map([...checkpoint.params].filter(([name]) => !name.startsWith('valueHead.')));
  const tokenizer = checkpoint.tokenizer ?? byteTokenizer;
  const architecture = options.architecture ?? defaultArchitecture(config);
  const chatFiles = checkpoint.chatFormat?.files;
  await saveCheckpoint(outDir, {
    config,
    params,
    tokenizer,
    architecture,
    extra: { exportedFrom: source, ...checkpoint.extra },
    ...(chatFiles === undefined ? {} : { chatFiles }),
  });
  const parameters = [...params.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
  const name = options.name ?? outDir.split(/[\\/]/).filter(Boolean).at(-1) ?? 'agentrl-policy';
  const files = [
    'README.md',
    'config.json',
    'generation_config.json',
    'model.safetensors',
    'special_tokens_map.json',
    'tokenizer.json',
    'tokenizer_config.json',
  ];
  if (chatFiles !== undefined) {
    // A real model keeps its own tokenizer files (saveCheckpoint wrote them) and special tokens.
    const specialTokensMap = Object.fromEntries(
      ['bos_token', 'eos_token', 'pad_token', 'unk_token'].flatMap((key) =>
        chatFiles.tokenizerConfig[key] === undefined ? [] : [[key, chatFiles.tokenizerConfig[key]]],
      ),
    );
    await writeFileAtomic(join(outDir, 'special_tokens_map.json'), `${JSON.stringify(specialTokensMap, null, 2)}\n`);
    await writeFileAtomic(
      join(outDir, 'README.md'),
      modelCard({ name, architecture, parameters, config, byteLevel: false }),
    );
    return { files, architecture, parameters };
  }

  const special = tokenizer.specialTokens;
  // Embedding rows past the tokenizer's tokens (the default byte model: 263-271) are never trained
  // on; agentrl's sampler never draws them, and transformers' generate honours suppress_tokens.
  const spareIds = Array.from({ length: config.vocabSize - tokenizer.vocabSize }, (_, i) => tokenizer.vocabSize + i);
  const generationConfig = {
    bos_token_id: special.bos,
    eos_token_id: special.end,
    pad_token_id: special.pad,
    max_length: config.maxSeqLen,
    do_sample: true,
    temperature: 1.0,
    top_p: 1.0,
    ...(spareIds.length > 0 ? { suppress_tokens: spareIds } : {}),
  };
  const specialTokensMap = {
    bos_token: specialTokenText.bos,
    eos_token: specialTokenText.end,
    pad_token: specialTokenText.pad,
    additional_special_tokens: [
      specialTokenText.system,
      specialTokenText.user,
      specialTokenText.assistant,
      specialTokenText.tool,
    ],
  };
  await writeFileAtomic(join(outDir, 'generation_config.json'), `${JSON.stringify(generationConfig, null, 2)}\n`);
  await writeFileAtomic(join(outDir, 'special_tokens_map.json'), `${JSON.stringify(specialTokensMap, null, 2)}\n`);
  await writeFileAtomic(
    join(outDir, 'README.md'),
    modelCard({ name, architecture, parameters, config, byteLevel: tokenizer === byteTokenizer }),
  );
  return { files, architecture, parameters };
}

function modelCard(card: {
  name: string;
  architecture: HfArchitecture;
  parameters: number;
  config: { maxSeqLen: number; vocabSize: number };
  byteLevel: boolean;
}): string {
  return `---
library_name: transformers
tags: [agentrl, reinforcement-learning]
---
# ${card.name}

A policy trained with agentrl (agentic RL for TypeScript) and exported with \`agentrl export-hf\`:
${card.architecture}, ${card.parameters.toLocaleString('en-US')} parameters, context ${card.config.maxSeqLen} tokens,
float32 weights.

## Chat format

\`\`\`
<|bos|><|system|>{system}<|end|><|user|>{user}<|end|><|assistant|>{reply}<|end|>
\`\`\`

\`tokenizer_config.json\` carries it as a Jinja chat template (\`apply_chat_template\`); generation
stops at \`<|end|>\` (the eos token). A tool call is written inside the reply as
\`<tool_call>{"name": "...", "arguments": {...}}</tool_call>\`; a tool's output comes back as a
\`<|tool|>\` message. The template renders \`tools\` as a system prompt, keeps OpenAI-style
\`arguments\` strings verbatim, and writes special-token text found inside a message with U+200B
after its \`<\` (\`<\\u200b|end|>\`), so text never opens or closes a turn — exactly as agentrl renders it.

## Tokenizer

${
  card.byteLevel
    ? `Byte-level: ids 0-255 are the UTF-8 bytes of the text, 256-262 the special tokens
(\`tokenizer.json\`: BPE with 256 byte tokens and no merges). The model's vocabulary is
${card.config.vocabSize}; the ids above 262 are unused spares.`
    : 'The byte-level BPE tokenizer the model was trained with (`tokenizer.json`).'
}

## llama.cpp (GGUF)

\`\`\`
python llama.cpp/convert_hf_to_gguf.py ${card.name} --outfile ${card.name}.gguf --outtype f32
\`\`\`

${
  card.byteLevel
    ? `The converter identifies a BPE tokenizer by hashing its output on a probe text and stops
with "BPE pre-tokenizer was not recognized" for tokenizers it does not list, which includes this
byte tokenizer. With no merges every pre-tokenizer split yields the same per-byte ids, so mapping
the printed hash to \`default\` in \`get_vocab_base_pre()\` is safe for this vocabulary.`
    : 'If the converter does not recognise the tokenizer, register its hash in `get_vocab_base_pre()`.'
}
`;
}
