/**
 * MemGPT-style memory (Packer et al. 2023, arXiv 2310.08560): the policy manages its own context.
 *
 * Main context, rendered for every step, within `contextBudget` tokens (prompt + reply):
 *   system: instructions, the memory functions, the working context (core memory blocks
 *           `persona` and `human`) and memory statistics;
 *   the FIFO queue: a recursive summary of evicted messages (when there is one), then the
 *           messages in order.
 * External context, searchable with paged results:
 *   recall storage — every message ever (conversation_search);
 *   archival storage — what the agent saved (archival_memory_insert / archival_memory_search).
 *
 * The policy acts by calling functions, in its chat format's tool-call syntax (agentrl's
 * `<tool_call>{…}</tool_call>`, SmolLM2's `<tool_call>[…]</tool_call>` …): core_memory_append,
 * core_memory_replace, archival_memory_insert, archival_memory_search, conversation_search and
 * send_message, which answers the user and ends the turn; any other call's result comes back and
 * the agent steps again (MemGPT's heartbeat), up to `maxSteps` per user message.
 *
 * Memory pressure: when the prompt passes `warningFraction` of the budget, a system alert is queued
 * (once, until the prompt is back under that mark), telling the agent to save what matters. When a step's prompt would not fit, the oldest
 * messages are evicted until the queue is at most `evictFraction` of its size, and the policy
 * writes a new summary from the previous summary and the evicted messages (recursive
 * summarisation); evicted messages stay in recall storage.
 *
 * Every step is a trajectory segment (the exact prompt, then the reply), so the RL trainer trains
 * through the agent unchanged (`trajectory()`); `reward(r)` scores the latest step. Prompts are
 * rendered, and tokens counted, in the policy's chat format (`chatFormatOf`).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import type { Message, Tool, Trajectory } from '../core/types.ts';
import type { ChatFormat } from '../chat/chat-format.ts';
import { chatFormatOf, isAgentrlFormat, stopTokensOf, toolCallExample } from '../chat/policy-chat-format.ts';
import { fitUserPrompt } from './fit-prompt.ts';
import type { Policy } from '../policy/types.ts';
import { formatPage, MemoryStore } from './memory-store.ts';
import { callTool, listTools } from './tools.ts';
import { TokenTranscript } from './token-transcript.ts';
import type { AgentSampling } from './transcript.ts';
import { ToolError } from '../core/errors.ts';

export interface MemGPTOptions {
  policy: Policy;
  /** The instructions at the top of the system message. Default: MemGPT's, in short. */
  instructions?: string;
  /** List the memory functions (one line each) in the system message. Default true; off saves ~800 byte tokens for a model trained to use them. */
  listFunctions?: boolean;
  /** Core memory: the agent's persona. */
  persona?: string;
  /** Core memory: what the agent knows about the user. */
  human?: string;
  /** Prompt + reply tokens at most. Default the policy's context window, or 8192 when unbounded. */
  contextBudget?: number;
  /** Share of the budget at which the memory-pressure alert is queued. Default 0.7. */
  warningFraction?: number;
  /** Share of the queue's tokens kept after an eviction. Default 0.5. */
  evictFraction?: number;
  /** Characters per core-memory block at most. Default 2000. */
  coreMemoryLimit?: number;
  /** Results per search page. Default 5. */
  pageSize?: number;
  /** Agent steps per user message at most. Default 6. */
  maxSteps?: number;
  /** Default { maxNewTokens: 256 }; the seed advances by one per generation. */
  sampling?: AgentSampling;
  /** Summary generations: default `sampling`. */
  summarySampling?: AgentSampling;
}

export interface MemGPTStep {
  reply: string;
  call?: { name: string; arguments: Record<string, unknown> };
  /** The function result or error the agent saw ('' after send_message). */
  result: string;
  error: boolean;
}

export interface MemGPTTurn {
  /** What send_message said; undefined when the turn ended without it. */
  reply?: string;
  steps: MemGPTStep[];
  stopReason: 'send_message' | 'max-steps' | 'context-budget';
}

type BlockName = 'persona' | 'human';

const INSTRUCTIONS = [
  'You are a conversational agent with a limited context window and an external memory.',
  'Your context holds the working context (core memory, always visible) and the most recent messages; older messages are evicted and summarised, but stay searchable with conversation_search.',
  'Save facts you will need later with archival_memory_insert or core memory; find them again with archival_memory_search.',
  'Act only by calling functions; reply to the user with send_message.',
].join('\n');

/** How to write a call, for the malformed-call message: agentrl's long-standing wording for its byte template, the family's syntax otherwise. */
function callSyntax(format: ChatFormat): string {
  return isAgentrlFormat(format)
    ? '<tool_call>{"name": …, "arguments": {…}}</tool_call>'
    : toolCallExample(format, '…');
}

export class MemGPTAgent {
  readonly policy: Policy;
  readonly core: Record<BlockName, string>;
  readonly recall = new MemoryStore();
  readonly archival = new MemoryStore();
  /** The FIFO queue of the main context. */
  readonly queue: Message[] = [];
  /** The recursive summary of evicted messages ('' before the first eviction). */
  summary = '';
  /** Messages evicted so far. */
  evicted = 0;
  readonly contextBudget: number;
  /** The chat format prompts are rendered in (the policy's). */
  readonly format: ChatFormat;
  private readonly options: MemGPTOptions;
  private readonly functions: Tool[];
  /** Every step's exact prompt and reply, as one segment each. */
  private readonly record = new TokenTranscript({ segments: true });
  private warned = false;
  private generations = 0;
  private pendingReply: string | undefined;

  constructor(options: MemGPTOptions) {
    this.options = options;
    this.policy = options.policy;
    this.format = chatFormatOf(options.policy);
    this.core = { persona: options.persona ?? '', human: options.human ?? '' };
    this.contextBudget =
      options.contextBudget ?? (Number.isFinite(options.policy.contextWindow) ? options.policy.contextWindow : 8192);
    if (this.contextBudget > options.policy.contextWindow) {
      throw new InvalidArgumentError(
        `contextBudget ${this.contextBudget} exceeds the policy's context window ${options.policy.contextWindow}`,
        { contextBudget: this.contextBudget },
      );
    }
    for (const [name, value] of [
      ['warningFraction', options.warningFraction],
      ['evictFraction', options.evictFraction],
    ] as const) {
      if (value !== undefined && !(value > 0 && value < 1))
        throw new InvalidArgumentError(`${name} must be in (0, 1), got ${value}`, { [name]: value });
    }
    this.functions = this.memoryFunctions();
  }

  /** Handles one user message: steps until send_message, `maxSteps` or the budget runs out. */
  async send(content: string): Promise<MemGPTTurn> {
    this.enqueue({ role: 'user', content });
    const steps: MemGPTStep[] = [];
    const maxSteps = this.options.maxSteps ?? 6;
    const sampling = this.options.sampling ?? { maxNewTokens: 256 };
    while (steps.length < maxSteps) {
      const prompt = await this.fitPrompt(sampling.maxNewTokens);
      if (prompt === undefined) return { steps, stopReason: 'context-budget' };
      const generation = await this.policy.generate({
        ...sampling,
        prompt,
        stopTokens: stopTokensOf(this.format),
        seed: (sampling.seed ?? 0) + this.generations++,
      });
      // The step's segment is its exact prompt and reply; the next step's prompt is rendered afresh.
      this.record.appendContext(prompt);
      this.record.appendReply(generation, { prompt });
      this.enqueue({ role: 'assistant', content: generation.text });
      const step = await this.act(generation.text);
      steps.push(step);
      this.record.observe(step.result, { invalidAction: step.error });
      if (this.pendingReply !== undefined) {
        const reply = this.pendingReply;
        this.pendingReply = undefined;
        return { reply, steps, stopReason: 'send_message' };
      }
    }
    return { steps, stopReason: 'max-steps' };
  }

  /** Adds a reward to the latest step. */
  reward(value: number): void {
    this.record.reward(value);
  }

  /** Every step so far as one segmented trajectory (segments are what the RL trainer trains on). */
  trajectory({
    success = false,
    groupId = 'memgpt',
    seed = 0,
  }: {
    success?: boolean;
    groupId?: string;
    seed?: number;
  } = {}): Trajectory {
    return this.record.trajectory({ success, truncated: false, groupId, seed });
  }

  /** The main context as messages: system (instructions, functions, working context), summary, queue. */
  mainContext(): Message[] {
    const system = [
      this.options.instructions ?? INSTRUCTIONS,
      ...(this.options.listFunctions === false
        ? []
        : [listTools(this.functions, { callExample: toolCallExample(this.format, '<function>') })]),
      '### Working context (core memory)',
      `<persona>\n${this.core.persona}\n</persona>`,
      `<human>\n${this.core.human}\n</human>`,
      `### Memory: ${this.recall.size} messages in recall storage (${this.evicted} evicted from this context), ${this.archival.size} passages in archival storage.`,
    ].join('\n');
    const summary: Message[] =
      this.summary === ''
        ? []
        : [{ role: 'user', content: `[system] Summary of the earlier conversation: ${this.summary}` }];
    return [{ role: 'system', content: system }, ...summary, ...this.queue];
  }

  /** Prompt tokens of the main context, in the policy's chat format. */
  promptTokens(): number {
    return this.render().length;
  }

  private render(): number[] {
    return this.format.render(this.mainContext(), { addGenerationPrompt: true }).tokens;
  }

  private enqueue(message: Message): void {
    this.queue.push(message);
    this.recall.insert(`${message.role}: ${message.content}`);
  }

  /** Applies memory pressure (alert, eviction + summary) and returns a prompt that fits, if any can. */
  private async fitPrompt(maxNewTokens: number): Promise<number[] | undefined> {
    const limit = this.contextBudget - maxNewTokens - 1;
    let prompt = this.render();
    const warning = (this.options.warningFraction ?? 0.7) * limit;
    if (prompt.length <= warning) this.warned = false;
    if (!this.warned && prompt.length > warning) {
      this.warned = true;
      const alert = `[system] Memory pressure: the context holds ${prompt.length} of ${limit} tokens. Older messages will soon be evicted; save anything important to archival or core memory now.`;
      this.enqueue({ role: 'user', content: alert });
      prompt = this.render();
    }
    while (prompt.length > limit && this.queue.length > 1) {
      await this.evict();
      prompt = this.render();
    }
    return prompt.length <= limit ? prompt : undefined;
  }

  /** Evicts the oldest messages (keeping the newest) and writes the new recursive summary. */
  private async evict(): Promise<void> {
    const sizes = this.queueSizes();
    const total = sizes.reduce((a, b) => a + b, 0);
    const keep = (this.options.evictFraction ?? 0.5) * total;
    let count = 0;
    let remaining = total;
    for (const size of sizes.slice(0, -1)) {
      if (remaining <= keep) break;
      remaining -= size;
      count++;
    }
    if (count === 0) return;
    const evicted = this.queue.splice(0, count);
    this.evicted += evicted.length;
    const sampling = this.options.summarySampling ?? this.options.sampling ?? { maxNewTokens: 256 };
    // The request holds the evicted messages; within the budget, cut from the front (older first) when they are too long.
    const previous = this.summary;
    const request = fitUserPrompt({
      text: evicted.map((message) => `${message.role}: ${message.content}`).join('\n'),
      build: (messages) =>
        [
          'Write a short summary of this conversation so far, keeping facts that may matter later.',
          ...(previous === '' ? [] : [`Summary of what came before: ${previous}`]),
          'Messages:',
          messages,
          'Summary:',
        ].join('\n'),
      format: this.format,
      budget: this.contextBudget - sampling.maxNewTokens - 1,
    });
    const note = `(${evicted.length} earlier messages were evicted; conversation_search finds them)`;
    if (request === undefined) {
      this.summary = [previous, note].filter((part) => part !== '').join(' ');
      return;
    }
    const generation = await this.policy.generate({
      ...sampling,
      stopTokens: stopTokensOf(this.format),
      seed: (sampling.seed ?? 0) + this.generations++,
      prompt: request,
    });
    const written = generation.text.trim();
    this.summary = written === '' ? [this.summary, note].filter((part) => part !== '').join(' ') : written;
  }

  /** The tokens each queued message adds to the main context, in the policy's format. */
  private queueSizes(): number[] {
    const context = this.mainContext();
    const first = context.length - this.queue.length;
    let before = this.format.render(context.slice(0, first)).tokens.length;
    return this.queue.map((_, i) => {
      const through = this.format.render(context.slice(0, first + i + 1)).tokens.length;
      const size = through - before;
      before = through;
      return size;
    });
  }

  private async act(text: string): Promise<MemGPTStep> {
    const { toolCalls, invalid } = this.format.parseAssistant(text);
    const call = toolCalls[0];
    if (call === undefined) {
      const result =
        invalid.length > 0 || text.includes('<tool_call>')
          ? `[system] The function call could not be read (malformed JSON or cut off); write ${callSyntax(this.format)}.`
          : '[system] No function was called. Act by calling a function; answer the user with send_message.';
      this.enqueue({ role: 'user', content: result });
      return { reply: text, result, error: true };
    }
    const outcome = await callTool(this.functions, call.name, call.arguments);
    const result = outcome.ok ? outcome.output : outcome.error;
    if (!(outcome.ok && call.name === 'send_message')) this.enqueue({ role: 'tool', content: result, name: call.name });
    return { reply: text, call: { name: call.name, arguments: call.arguments }, result, error: !outcome.ok };
  }

  private memoryFunctions(): Tool[] {
    const limit = this.options.coreMemoryLimit ?? 2000;
    const pageSize = this.options.pageSize ?? 5;
    const block = z.enum(['persona', 'human']);
    const page = z.number().int().min(0).default(0).describe('0-based result page');
    const fits = (name: BlockName, value: string): void => {
      if (value.length > limit)
        throw new ToolError(
          'core_memory',
          `core memory block "${name}" would hold ${value.length} characters; the limit is ${limit}. Move details to archival memory.`,
        );
    };
    return [
      {
        name: 'send_message',
        description: 'Sends a message to the user and ends your turn.',
        inputSchema: z.object({ message: z.string().min(1) }),
        execute: ({ message }: { message: string }) => {
          this.pendingReply = message;
          return '';
        },
      },
      {
        name: 'core_memory_append',
        description: 'Appends text to a block of your working context (persona or human).',
        inputSchema: z.object({ name: block, content: z.string().min(1) }),
        execute: ({ name, content }: { name: BlockName; content: string }) => {
          const next = this.core[name] === '' ? content : `${this.core[name]}\n${content}`;
          fits(name, next);
          this.core[name] = next;
          return `ok: ${name} now holds ${next.length} characters`;
        },
      },
      {
        name: 'core_memory_replace',
        description: 'Replaces old_content with new_content in a block of your working context.',
        inputSchema: z.object({ name: block, old_content: z.string().min(1), new_content: z.string() }),
        execute: ({
          name,
          old_content,
          new_content,
        }: {
          name: BlockName;
          old_content: string;
          new_content: string;
        }) => {
          if (!this.core[name].includes(old_content))
            throw new ToolError('core_memory_replace', `"${old_content}" is not in core memory block "${name}"`);
          const next = this.core[name].replace(old_content, new_content);
          fits(name, next);
          this.core[name] = next;
          return `ok: ${name} now holds ${next.length} characters`;
        },
      },
      {
        name: 'archival_memory_insert',
        description: 'Saves a passage to archival storage (unlimited, searchable).',
        inputSchema: z.object({ content: z.string().min(1) }),
        execute: ({ content }: { content: string }) => `ok: saved as passage ${this.archival.insert(content).index}`,
      },
      {
        name: 'archival_memory_search',
        description: 'Searches archival storage by keywords; results are paged.',
        inputSchema: z.object({ query: z.string().min(1), page }),
        execute: ({ query, page: index }: { query: string; page: number }) =>
          formatPage(this.archival.search(query, { page: index, pageSize })),
      },
      {
        name: 'conversation_search',
        description: 'Searches the whole conversation history (recall storage) by keywords; results are paged.',
        inputSchema: z.object({ query: z.string().min(1), page }),
        execute: ({ query, page: index }: { query: string; page: number }) =>
          formatPage(this.recall.search(query, { page: index, pageSize })),
      },
    ];
  }
}
