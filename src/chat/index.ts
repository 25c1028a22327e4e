/** The chat protocol of a model: its tokenizer.json, its Jinja chat template, its tool-call format. */
export { agentrlChatFormat, type ChatFormat, type ChatRenderOptions, type RenderedChat } from './chat-format.ts';
export { jinjaChatFormat, type JinjaChatFormatOptions } from './jinja-chat-format.ts';
export { loadChatFormat, loadModelTokenizer, hasTokenizerJson, type LoadChatFormatOptions } from './model-folder.ts';
export { loadTokenizerJson, type ModelTokenizer, type TokenizerJsonOptions } from './tokenizer-json.ts';
export {
  formatToolCalls,
  parseToolCalls,
  toolCallFamilies,
  type ToolCallFamily,
  type ParsedAssistantText,
} from './tool-call-format.ts';
export { chatFormatOf, stopTokensOf, userPrompt, appendedTokens, toolCallExample } from './policy-chat-format.ts';
