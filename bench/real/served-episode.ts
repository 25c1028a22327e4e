/**
 * One calculator episode played over the OpenAI API (the `openai` npm client against a served
 * policy), scored by the env itself: the env's system text and tool (`env.tools` as OpenAI tools),
 * its first observation as the user message; a reply with `tool_calls` steps the env with that
 * call (the structured call the in-process rollout parses from the same text: rollout/episode.ts),
 * its result goes back as the `tool` message; a reply without one is the final answer. Success and
 * the reward components (`call_format`: a well-formed call, `tool_call`: a call that evaluated to
 * the answer) are the env's own, as in-process.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionMessageToolCall } from 'openai/resources/chat/completions';
import type { Action, Env, ToolCall } from '../../src/core/types.ts';
import { toolSchema } from '../../src/policy/openai-wire.ts';

/** How each served turn samples (the in-process rollout's settings). */
export interface ServedSampling {
  model: string;
  /** 0 = greedy. */
  temperature: number;
  maxNewTokens: number;
  maxTurns: number;
  stop: string[];
  /** The request seed (sampled turns). */
  seed: number;
}

/** What a served episode did: the env's verdict and components, and each reply as the client saw it. */
export interface ServedEpisode {
  seed: number;
  success: boolean;
  rewardComponents: Record<string, number>;
  /** Per turn: the reply's content, or `call <name>(<arguments>)` for a tool call. */
  replies: string[];
}

/** The reply's first tool call as the env's structured call (an Action holds one call, as in-process). */
function structuredCall(call: ChatCompletionMessageToolCall | undefined): ToolCall | undefined {
  if (call === undefined || call.type !== 'function') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.function.arguments);
  } catch {
    parsed = undefined;
  }
  const args = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
  return {
    id: call.id,
    name: call.function.name,
    arguments: args as Record<string, unknown>,
    argumentsJson: call.function.arguments,
  };
}

function addComponents(into: Record<string, number>, components: Record<string, number> | undefined): void {
  for (const [name, value] of Object.entries(components ?? {})) into[name] = (into[name] ?? 0) + value;
}

/** Plays `env` on `seed` against the served model through `client`; the env scores every turn. */
export async function playServed(
  client: OpenAI,
  env: Env,
  seed: number,
  sampling: ServedSampling,
): Promise<ServedEpisode> {
  const observation = await env.reset({ seed });
  const messages: ChatCompletionMessageParam[] = [
    ...(env.instructions === undefined ? [] : [{ role: 'system' as const, content: env.instructions }]),
    { role: 'user', content: observation.text },
  ];
  const tools = (env.tools ?? []).map(toolSchema);
  const episode: ServedEpisode = { seed, success: false, rewardComponents: {}, replies: [] };
  for (let turn = 0; turn < sampling.maxTurns; turn++) {
    const completion = await client.chat.completions.create({
      model: sampling.model,
      messages,
      tools,
      temperature: sampling.temperature,
      max_tokens: sampling.maxNewTokens,
      ...(sampling.stop.length === 0 ? {} : { stop: sampling.stop }),
      seed: sampling.seed + turn,
    });
    const message = completion.choices[0]?.message;
    if (message === undefined) throw new Error(`seed ${seed}, turn ${turn}: the server sent no choice`);
    const wireCall = message.tool_calls?.[0];
    const toolCall = structuredCall(wireCall);
    const content = message.content ?? '';
    episode.replies.push(
      toolCall === undefined ? content : `call ${toolCall.name}(${toolCall.argumentsJson ?? ''})${content}`,
    );
    const action: Action = toolCall === undefined ? { text: content } : { text: content, toolCall };
    const result = await env.step(action);
    addComponents(episode.rewardComponents, result.info.rewardComponents);
    episode.success = result.info.success === true;
    if (result.done || result.truncated) break;
    if (toolCall !== undefined && wireCall !== undefined) {
      messages.push({ role: 'assistant', content: message.content, tool_calls: [wireCall] });
      messages.push({ role: 'tool', tool_call_id: toolCall.id, content: result.observation.text });
    } else {
      messages.push({ role: 'assistant', content });
      messages.push({ role: 'user', content: result.observation.text });
    }
  }
  return episode;
}
