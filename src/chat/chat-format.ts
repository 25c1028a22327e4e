/**
 * A `ChatFormat` is everything the rollout, agents and servers need to speak a model's chat
 * protocol in token ids: render a conversation (+ tools) with a generation prompt and an
 * assistant mask, the stop tokens, the ids that close a reply and open the next user turn, and
 * the tool-call format of the model's family.
 *
 * Two implementations: `agentrlChatFormat` (the byte model's own template, chat-template.ts)
 * and `jinjaChatFormat` (jinja-chat-format.ts: the model's Jinja template from its
 * tokenizer_config.json, rendered with @huggingface/jinja). A policy that carries one
 * (`Policy.chatFormat`) is rendered for with it; without one the rollout uses agentrl's.
 *
 * A format made from a model's files keeps them (`files`), so a checkpoint of a policy that
 * speaks it can write them again (model/checkpoint.ts) and reload the same format.
 */
import type { Message } from '../core/types.ts';
import {
  assistantText,
  parseAssistantText,
  renderChat,
  renderGenerationPrompt,
  renderMessage,
  type RenderedChat,
} from './chat-template.ts';
import { byteTokenizer, type Tokenizer } from './tokenizer.ts';
import { withToolsPrompt, type PromptTool } from './tools-prompt.ts';
import type { ParsedAssistantText } from './tool-call-format.ts';

export type { RenderedChat } from './chat-template.ts';

export interface ChatRenderOptions {
  /** Tools the model may call (OpenAI function-tool shape). Default none. */
  tools?: readonly PromptTool[];
  /** End with the opening of an assistant turn, for the model to continue. Default false. */
  addGenerationPrompt?: boolean;
}

/** The Hugging Face files a model's chat format is made from (model-folder.ts `chatFormatFromFiles`). */
export interface ChatFormatFiles {
  /** tokenizer.json */
  tokenizerJson: Record<string, unknown>;
  /** tokenizer_config.json, its `chat_template` included (inlined from chat_template.jinja when it came from there). */
  tokenizerConfig: Record<string, unknown>;
  /** generation_config.json (`eos_token_id`: the stop tokens); {} when the model has none. */
  generationConfig: Record<string, unknown>;
}

/** The call a tool message answers. */
export interface AnsweredCall {
  id: string;
  name: string;
}

export interface ChatFormat {
  /** 'agentrl' or the model's name/folder. */
  readonly name: string;
  readonly tokenizer: Tokenizer;
  /** Ids that end a generated reply (eos, `<|im_end|>`, `<|eot_id|>` …). */
  readonly stopTokens: readonly number[];
  /**
   * What follows an assistant reply's text in the template, starting with the stop token the
   * model generates (`[<|im_end|>, "\n"]` for ChatML, `[<|end|>]` for agentrl's).
   */
  readonly turnEnd: readonly number[];
  /** Messages → ids and the assistant mask (1 on each assistant reply and its stop token). */
  render(messages: readonly Message[], options?: ChatRenderOptions): RenderedChat;
  /**
   * The ids of `render` alone, without the assistant mask: one rendering, where a model template's
   * mask costs two more per assistant message (what a server answering a request needs).
   */
  promptTokens(messages: readonly Message[], options?: ChatRenderOptions): number[];
  /** The ids a new user message adds after a closed assistant turn, generation prompt included. */
  userTurn(text: string): number[];
  /**
   * The ids a tool message (the result of `call`) adds after the closed assistant turn that made
   * the call, generation prompt included — the model's own tool-result turn.
   */
  toolTurn(content: string, call: AnsweredCall): number[];
  /** The text of an assistant message (content and tool calls) as the model writes it. */
  assistantText(message: Pick<Message, 'content' | 'toolCalls'>): string;
  /** Generated text → content and tool calls, in the model's tool-call format. */
  parseAssistant(text: string, options?: { idPrefix?: string }): ParsedAssistantText;
  /** The model files this format was made from; absent for agentrl's byte template (a checkpoint writes its own). */
  readonly files?: ChatFormatFiles;
}

/** agentrl's byte template (chat-template.ts) as a ChatFormat. */
export function agentrlChatFormat(tokenizer: Tokenizer = byteTokenizer): ChatFormat {
  const special = tokenizer.specialTokens;
  const render: ChatFormat['render'] = (messages, { tools = [], addGenerationPrompt = false } = {}) => {
    const withTools = withToolsPrompt(messages, tools);
    return addGenerationPrompt
      ? renderGenerationPrompt(withTools, { tokenizer })
      : renderChat(withTools, { tokenizer });
  };
  return {
    name: 'agentrl',
    tokenizer,
    stopTokens: [special.end],
    turnEnd: [special.end],
    render,
    promptTokens: (messages, options) => render(messages, options).tokens, // the byte template's mask costs nothing more
    userTurn(text) {
      return [...renderMessage({ role: 'user', content: text }, { tokenizer }).tokens, special.assistant];
    },
    toolTurn(content) {
      return [...renderMessage({ role: 'tool', content }, { tokenizer }).tokens, special.assistant];
    },
    assistantText,
    parseAssistant: (text, options) => parseAssistantText(text, options),
  };
}
