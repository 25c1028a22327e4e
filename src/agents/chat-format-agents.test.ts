/**
 * The scaffolds with a policy that carries a model's own chat format (the tiny ChatML double with
 * SmolLM2's `<tool_call>[…]</tool_call>` calls): prompts, stop tokens, tool-call parsing, tool
 * results and token accounting all in that format.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jinjaChatFormat } from '../chat/jinja-chat-format.ts';
import { userPrompt } from '../chat/policy-chat-format.ts';
import { tinyChatmlFormat } from '../chat/tiny-chatml.ts';
import { calculatorTool } from '../envs/calculator/env.ts';
import { toolSchema } from '../policy/openai-wire.ts';
import { ScriptedPolicy, type ScriptContext } from '../policy/scripted-policy.ts';
import type { GenerateRequest, Generation, Policy } from '../policy/types.ts';
import { policySolver } from '../train/self-play.ts';
import { runMcts } from './mcts.ts';
import { MemGPTAgent } from './memgpt.ts';
import { runReAct } from './react.ts';
import { runReflexion } from './reflexion.ts';
import { runToolLoop } from './tool-calling.ts';
import { runTreeOfThoughts } from './tree-of-thoughts.ts';
import { at } from '../core/indexing.ts';

const format = tinyChatmlFormat();
const text = (ids: readonly number[]): string => format.tokenizer.decode(ids);
const smolCall = (name: string, args: Record<string, unknown>): string =>
  `<tool_call>[${JSON.stringify({ name, arguments: args }).replace(/,"/g, ', "').replace(/":/g, '": ')}]</tool_call>`;

/** A scripted policy speaking the tiny ChatML format; `reply` sees the prompt's text. */
function chatmlPolicy(
  reply: readonly string[] | ((prompt: string, context: ScriptContext) => string),
  options: { logprob?: number; contextWindow?: number } = {},
): ScriptedPolicy {
  const script = typeof reply === 'function' ? (context: ScriptContext) => reply(text(context.prompt), context) : reply;
  return new ScriptedPolicy({ reply: script, tokenizer: format.tokenizer, chatFormat: format, ...options });
}

/** The policy, keeping every request it was sent. */
function recording(policy: Policy): { policy: Policy; requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  const wrapped: Policy = {
    tokenizer: policy.tokenizer,
    contextWindow: policy.contextWindow,
    ...(policy.chatFormat === undefined ? {} : { chatFormat: policy.chatFormat }),
    generate: (request): Promise<Generation> => {
      requests.push(request);
      return policy.generate(request);
    },
    generateBatch: (batch) => {
      requests.push(...batch);
      return policy.generateBatch(batch);
    },
  };
  return { policy: wrapped, requests };
}

describe("agents in the policy's own chat format (tiny ChatML, SmolLM2 tool calls): tool calling", () => {
  test('tool calling: a <tool_call>[…] reply runs the tool, the result comes back as a tool message; the ids are the format rendering, masked on the replies', async () => {
    const { policy, requests } = recording(
      chatmlPolicy([smolCall('calculator', { expression: '17 * 23' }), 'The answer is 391.'], { logprob: -0.5 }),
    );
    const result = await runToolLoop({ policy, tools: [calculatorTool], prompt: 'What is 17 * 23?' });
    assert.equal(result.stopReason, 'stop-condition');
    assert.deepEqual(at(result.steps, 0).results, [
      { call: { id: 'call_0_0', name: 'calculator', arguments: { expression: '17 * 23' } }, output: '391' },
    ]);
    assert.equal(result.finalAnswer, 'The answer is 391.');
    assert.deepEqual(
      result.messages.map((message) => message.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.ok(
      requests.every((request) => request.stopTokens?.[0] === 2),
      'generation stops at <|im_end|>',
    );

    const { trajectory } = result;
    const rendered = format.render(result.messages, { tools: [toolSchema(calculatorTool)] });
    assert.deepEqual(
      trajectory.tokens,
      rendered.tokens,
      "the transcript is the format's rendering of the conversation",
    );
    assert.deepEqual(trajectory.lossMask, rendered.assistantMask, 'the mask is on the replies and their <|im_end|>');
    const transcript = text(trajectory.tokens);
    assert.match(
      transcript,
      /^<\|im_start\|>system\nYou can call these tools:\n<tools>\n\{"name": "calculator"/,
      "the template's tool list",
    );
    assert.ok(
      transcript.includes(
        '<|im_end|>\n<|im_start|>tool\n391<|im_end|>\n<|im_start|>assistant\nThe answer is 391.<|im_end|>\n',
      ),
      transcript,
    );
    trajectory.logprobs.forEach((logprob, t) => {
      assert.equal(logprob, trajectory.lossMask[t] === 1 ? -0.5 : 0);
    });
  });
});

describe("agents in the policy's own chat format (tiny ChatML, SmolLM2 tool calls): grouped tool results, malformed calls", () => {
  test("tool calling: a reply's tool results go in together, so a template grouping them in one turn (Qwen2.5's <tool_response>s) stays prefix-stable", async () => {
    // Qwen2.5's tool-result rule: consecutive results share one user turn, closed after the last.
    const template =
      "{%- for message in messages %}{%- if message.role == 'tool' %}{%- if loop.index0 == 0 or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}{{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\n' }}{%- endif %}{%- else %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}";
    const qwen = jinjaChatFormat({
      name: 'qwen-like',
      tokenizer: format.tokenizer,
      template,
      stopTokens: [2],
      toolCallFamily: 'qwen',
    });
    const calls = ['2 * 3', '4 + 5']
      .map(
        (expression) =>
          `<tool_call>\n{"name": "calculator", "arguments": {"expression": "${expression}"}}\n</tool_call>`,
      )
      .join('\n');
    const policy = new ScriptedPolicy({
      reply: [calls, 'Done: 6 and 9.'],
      tokenizer: qwen.tokenizer,
      chatFormat: qwen,
    });
    const result = await runToolLoop({ policy, tools: [calculatorTool], prompt: 'Compute both.' });
    assert.deepEqual(
      at(result.steps, 0).results.map((step) => step.output),
      ['6', '9'],
    );
    assert.equal(result.finalAnswer, 'Done: 6 and 9.');
    const rendered = qwen.render(result.messages, { tools: [toolSchema(calculatorTool)] });
    assert.deepEqual(result.trajectory.tokens, rendered.tokens);
    assert.deepEqual(result.trajectory.lossMask, rendered.assistantMask);
    assert.ok(
      text(rendered.tokens).includes(
        '<|im_start|>user\n<tool_response>\n6\n</tool_response>\n<tool_response>\n9\n</tool_response><|im_end|>\n<|im_start|>assistant\nDone',
      ),
    );
  });

  test("tool calling: a malformed call is answered in the model's call syntax", async () => {
    const policy = chatmlPolicy(['<tool_call>[{"name": "calculator", </tool_call>', 'I give up.']);
    const result = await runToolLoop({ policy, tools: [calculatorTool], prompt: 'Compute.' });
    assert.equal(at(result.steps, 0).malformed.length, 1);
    assert.match(
      at(result.messages, 2).content,
      /write <tool_call>\[\{"name": "<tool name>", "arguments": \{"\.\.\.": "\.\.\."\}\}\]<\/tool_call> with valid JSON/,
    );
    assert.equal(result.finalAnswer, 'I give up.');
  });
});

describe("agents in the policy's own chat format: ReAct and MemGPT", () => {
  test("ReAct: a reply cut at its stop string is closed with the template's whole turn end", async () => {
    const policy = chatmlPolicy([
      'Thought: add\nAction: calculator[{"expression": "1 + 1"}]\nObservation: 3',
      'Thought: done\nAction: Finish[2]',
    ]);
    const result = await runReAct({ policy, tools: [calculatorTool], question: '1 + 1?' });
    assert.equal(result.answer, '2');
    assert.equal(at(result.steps, 0).observation, '2');
    const { tokens, lossMask } = result.trajectory;
    const first = at(result.trajectory.turns, 0);
    assert.equal(
      text(tokens.slice(first.start, first.end)),
      'Thought: add\nAction: calculator[{"expression": "1 + 1"}]\nObservation:',
    );
    assert.equal(text(tokens.slice(first.end, first.end + 2)), '<|im_end|>\n');
    assert.deepEqual(lossMask.slice(first.end, first.end + 2), [0, 0]);
    assert.ok(
      text(tokens).endsWith(
        '<|im_start|>user\nObservation: 2<|im_end|>\n<|im_start|>assistant\nThought: done\nAction: Finish[2]<|im_end|>\n',
      ),
    );
  });

  test("MemGPT: functions called in SmolLM2's syntax, prompts rendered and counted in the model's format, eviction within the budget", async () => {
    const sampling = { maxNewTokens: 96 };
    const policy = chatmlPolicy((prompt) =>
      prompt.includes('Write a short summary') ? 'S' : smolCall('send_message', { message: 'Noted.' }),
    );
    const probe = new MemGPTAgent({ policy, sampling });
    assert.equal(probe.promptTokens(), format.render(probe.mainContext(), { addGenerationPrompt: true }).tokens.length);
    assert.match(
      at(probe.mainContext(), 0).content,
      /To call a function, reply with <tool_call>\[\{"name": "<function>", "arguments": \{"\.\.\.": "\.\.\."\}\}\]<\/tool_call>\./,
    );

    const agent = new MemGPTAgent({
      policy,
      sampling,
      contextBudget: probe.promptTokens() * 2 + sampling.maxNewTokens + 1,
    });
    const limit = agent.contextBudget - sampling.maxNewTokens - 1;
    for (let i = 1; i <= 12; i++) {
      const turn = await agent.send(`Message number ${i}: the weather is fine in town ${i}.`);
      assert.equal(turn.reply, 'Noted.');
    }
    assert.ok(agent.evicted > 0, 'messages were evicted');
    assert.equal(agent.summary, 'S');
    const segments = agent.trajectory().segments!;
    for (const segment of segments) {
      const promptLength = segment.lossMask.indexOf(1);
      assert.ok(promptLength <= limit, `a prompt of ${promptLength} tokens fits the limit ${limit}`);
      assert.ok(text(segment.tokens.slice(0, promptLength)).endsWith('<|im_start|>assistant\n'));
      assert.equal(segment.tokens.at(-1), 2, 'each reply ends in <|im_end|>');
    }
  });
});

describe("agents in the policy's own chat format: Tree of Thoughts, MCTS, Reflexion and self-play", () => {
  test('Tree of Thoughts, MCTS, Reflexion and self-play prompt with a user turn in the format and stop at its tokens', async () => {
    const { policy, requests } = recording(chatmlPolicy(['step', 'sure']));
    await runTreeOfThoughts({
      policy,
      problem: { input: '2 + 2', depth: 1 },
      generator: { kind: 'sample', k: 1 },
      evaluator: { kind: 'value', samples: 1 },
      search: { kind: 'bfs', breadth: 1 },
      sampling: { maxNewTokens: 16 },
    });
    await runMcts({
      policy,
      problem: { initialState: 's', maxDepth: 1, isTerminal: () => false, reward: () => 1 },
      iterations: 1,
      actions: 1,
      sampling: { maxNewTokens: 16 },
    });
    await runReflexion({
      policy,
      task: 't',
      trials: 2,
      attempt: async () => ({ success: false, transcript: 'tried', result: null }),
      sampling: { maxNewTokens: 16 },
    });
    assert.equal((await policySolver(policy, { maxNewTokens: 16 })('Solve 2 + 2', 2)).length, 2);
    assert.ok(requests.length >= 7, `${requests.length} requests`);
    for (const request of requests) {
      const prompt = text(request.prompt);
      assert.match(
        prompt,
        /^<\|im_start\|>system\nYou are helpful\.<\|im_end\|>\n<\|im_start\|>user\n[\s\S]*<\|im_end\|>\n<\|im_start\|>assistant\n$/,
        prompt,
      );
      assert.deepEqual(request.stopTokens, [2]);
    }
    assert.deepEqual(at(requests, requests.length - 1).prompt, userPrompt(format, 'Solve 2 + 2'));
  });
});
