/**
 * agentrl's chat template in Jinja, for `tokenizer_config.json`: transformers'
 * `apply_chat_template(messages, tools=…, add_generation_prompt=…)` renders it to exactly the ids
 * agentrl renders for the same request in `serve-policy` (protocol.ts `toMessages` →
 * tools-prompt.ts `withToolsPrompt` → chat-template.ts `renderChat` / `renderGenerationPrompt`).
 * `npm run check:hf` checks this with transformers itself on a seeded set of conversations.
 *
 * What it mirrors, piece by piece:
 *   - `developer` is a system message; content is a string, null, or a list of parts whose
 *     `text` parts are joined;
 *   - `tools` (OpenAI `{type, function}` or bare function dicts) become the tools prompt, merged
 *     into a first system message after a blank line or placed first (`tool_choice` is not a
 *     template input: a caller that sets it to `none` leaves `tools` out);
 *   - tool calls (`{function: {name, arguments}}` or `{name, arguments}`): an `arguments` string
 *     is inserted verbatim ('' as `{}`), a dict as compact JSON (`tojson` with `,`/`:`
 *     separators = JSON.stringify, except that Python writes an integral float as `1.0` and
 *     uses exponents from 1e16 and below 1e-4 — pass such arguments as a string);
 *   - special-token text inside a message gets U+200B after its `<` (`escapeSpecialTokenText`).
 */
import { noParameters, toolsPromptFooter, toolsPromptHeader, toolsPromptSeparator } from './tools-prompt.ts';
import { specialTokenText, type SpecialTokens } from './tokenizer.ts';

/** A Jinja string literal (Jinja unescapes like Python: \\n, \\\\, \\', \\uXXXX). */
function literal(text: string): string {
  let out = "'";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0; // a character of a string always has one
    if (char === '\\') out += '\\\\';
    else if (char === "'") out += "\\'";
    else if (char === '\n') out += '\\n';
    else if (code < 0x20 || code > 0x7e)
      out += code > 0xffff ? `\\U${code.toString(16).padStart(8, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return `${out}'`;
}

const roles: (keyof SpecialTokens)[] = ['system', 'user', 'assistant', 'tool'];
const roleHeaders = `{${roles.map((role) => `${literal(role)}: ${literal(specialTokenText[role])}`).join(', ')}}`;
const escapes = Object.values(specialTokenText)
  .map((text) => ` | replace(${literal(text)}, ${literal(`${text[0]}\u200b${text.slice(1)}`)})`)
  .join('');
const compact = "tojson(separators=(',', ':'))";

const template = [
  // content: a string, or the text parts of a list
  '{%- macro render_text(content) -%}',
  '{%- if content is string -%}{{- content -}}',
  "{%- elif content is iterable and content is not mapping -%}{%- for part in content -%}{%- if part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}{%- endfor -%}",
  '{%- endif -%}',
  '{%- endmacro -%}',
  // tool calls: arguments string verbatim, dict as compact JSON
  '{%- macro render_tool_calls(calls) -%}',
  '{%- for call in calls -%}',
  "{%- set function = call['function'] if call['function'] is defined else call -%}",
  "{%- set raw = function['arguments'] if function['arguments'] is defined and function['arguments'] is not none else {} -%}",
  `{%- set arguments = (raw if raw else '{}') if raw is string else (raw | ${compact}) -%}`,
  "{{- '<tool_call>{\"name\":' + (function['name'] | tojson) + ',\"arguments\":' + arguments + '}</tool_call>' -}}",
  '{%- endfor -%}',
  '{%- endmacro -%}',
  // the tools prompt
  `{%- set ns = namespace(tools_prompt='') -%}`,
  '{%- if tools -%}',
  `{%- set ns.tools_prompt = ${literal(toolsPromptHeader)} -%}`,
  '{%- for tool in tools -%}',
  "{%- set function = tool['function'] if tool['function'] is defined else tool -%}",
  "{%- set description = function['description'] if function['description'] is defined and function['description'] is not none else '' -%}",
  `{%- set parameters = function['parameters'] if function['parameters'] is defined and function['parameters'] is not none else ${JSON.stringify(noParameters).replace(/"/g, "'")} -%}`,
  `{%- set ns.tools_prompt = ns.tools_prompt + '\\n{"name":' + (function['name'] | tojson) + ',"description":' + (description | tojson) + ',"parameters":' + (parameters | ${compact}) + '}' -%}`,
  '{%- endfor -%}',
  `{%- set ns.tools_prompt = ns.tools_prompt + '\\n' + ${literal(toolsPromptFooter)} -%}`,
  '{%- endif -%}',
  // the conversation
  `{%- set headers = ${roleHeaders} -%}`,
  `{{- ${literal(specialTokenText.bos)} -}}`,
  "{%- if ns.tools_prompt and (messages | length == 0 or messages[0]['role'] not in ['system', 'developer']) -%}",
  `{{- headers['system'] + (ns.tools_prompt${escapes}) + ${literal(specialTokenText.end)} -}}`,
  '{%- endif -%}',
  '{%- for message in messages -%}',
  "{%- set role = 'system' if message['role'] == 'developer' else message['role'] -%}",
  "{%- set body = render_text(message['content']) -%}",
  `{%- if loop.first and role == 'system' and ns.tools_prompt -%}{%- set body = body + ${literal(toolsPromptSeparator)} + ns.tools_prompt -%}{%- endif -%}`,
  "{%- if role == 'assistant' and message['tool_calls'] -%}{%- set body = body + render_tool_calls(message['tool_calls']) -%}{%- endif -%}",
  `{{- (headers[role] if role in headers else '<|' + role + '|>') + (body${escapes}) + ${literal(specialTokenText.end)} -}}`,
  '{%- endfor -%}',
  `{%- if add_generation_prompt -%}{{- ${literal(specialTokenText.assistant)} -}}{%- endif -%}`,
].join('\n');

export const chatTemplateJinja: string = template;
