/**
 * ReAct (Yao et al. 2022, arXiv 2210.03629): the policy interleaves reasoning and acting,
 *
 *   Thought: I need the population of Paris.
 *   Action: search[population of Paris]
 *   Observation: 2.1 million          ← the tool's output, given back as a user message
 *   …
 *   Thought: I know it.
 *   Action: Finish[2.1 million]
 *
 * until `Finish[answer]` or `maxSteps` steps. The trajectory τ = (thought, action, observation)*
 * is recorded both as steps and in token space (`trajectory`, trainable with the RL trainer; the
 * optional `reward(answer)` is placed on the Finish turn).
 *
 * The input inside the brackets goes to the tool as a string when its schema takes one, otherwise
 * it is read as JSON. A reply without an `Action:` line, an unknown tool, bad input or a throwing
 * tool are observations the model sees. Generation stops at `\nObservation:` (the model must not
 * write its own observations).
 */
import type { Tool, Trajectory } from '../core/types.ts';
import type { Policy } from '../policy/types.ts';
import { callTool } from './tools.ts';
import { Transcript, type AgentSampling } from './transcript.ts';

export interface ReActOptions {
  policy: Policy;
  tools: readonly Tool[];
  question: string;
  /** Default 8. */
  maxSteps?: number;
  /** Default { maxNewTokens: 256 }; the seed advances by one per step. */
  sampling?: AgentSampling;
  /** Extra instructions before the format description (e.g. few-shot examples). */
  instructions?: string;
  /** Reward of a finished episode, placed on the Finish turn. Default none (0). */
  reward?: (answer: string) => number;
}

export interface ReActStep {
  thought: string;
  /** Tool name, 'Finish', or '' when the reply had no action. */
  action: string;
  input: string;
  observation: string;
}

export interface ReActResult {
  steps: ReActStep[];
  answer?: string;
  stopReason: 'finish' | 'max-steps' | 'context-window';
  trajectory: Trajectory;
}

const FORMAT_ERROR =
  'Invalid format. Reply with "Thought: <reasoning>" then "Action: <tool>[<input>]", or "Action: Finish[<answer>]" when done.';

export function reactInstructions(tools: readonly Tool[], extra?: string): string {
  const toolLines = tools.map((tool) => `- ${tool.name}[input]: ${tool.description}`);
  return [
    ...(extra === undefined ? [] : [extra, '']),
    'Solve the task with interleaved Thought, Action and Observation steps.',
    'Thought reasons about the current situation. Action is one of:',
    ...toolLines,
    '- Finish[answer]: returns the answer and ends the task.',
    'Write one Thought and one Action per reply; the Observation is given to you.',
  ].join('\n');
}

/** Reads `Thought: … Action: name[input]` from a reply; undefined when there is no action. */
export function parseReActReply(text: string): { thought: string; action: string; input: string } | undefined {
  const [body = ''] = text.split('\nObservation:');
  const match = /Action\s*(?:\d+)?\s*:\s*([A-Za-z_][\w-]*)\s*\[([\s\S]*)\]\s*$/.exec(body.trimEnd());
  if (match === null) return undefined;
  const before = body.slice(0, match.index);
  const thought = before.replace(/^[\s\S]*?Thought\s*(?:\d+)?\s*:/, '').trim();
  const [, action = '', input = ''] = match;
  return { thought, action, input: input.trim() };
}

export async function runReAct(options: ReActOptions): Promise<ReActResult> {
  const { policy, tools, question, maxSteps = 8 } = options;
  const sampling = options.sampling ?? { maxNewTokens: 256 };
  const transcript = new Transcript(policy, [
    { role: 'system', content: reactInstructions(tools, options.instructions) },
    { role: 'user', content: `Task: ${question}` },
  ]);
  const steps: ReActStep[] = [];
  let answer: string | undefined;
  let stopReason: ReActResult['stopReason'] = 'max-steps';

  while (steps.length < maxSteps) {
    const generation = await transcript.generate({
      ...sampling,
      stopStrings: [...(sampling.stopStrings ?? []), '\nObservation:'],
      seed: (sampling.seed ?? 0) + steps.length,
    });
    if (generation === undefined) {
      stopReason = 'context-window';
      break;
    }
    const parsed = parseReActReply(generation.text);
    if (parsed === undefined) {
      steps.push({ thought: generation.text.trim(), action: '', input: '', observation: FORMAT_ERROR });
      transcript.observe({ role: 'user', content: `Observation: ${FORMAT_ERROR}` }, { invalidAction: true });
      continue;
    }
    if (parsed.action.toLowerCase() === 'finish') {
      answer = parsed.input;
      steps.push({ ...parsed, action: 'Finish', observation: '' });
      transcript.reward(options.reward?.(answer) ?? 0);
      stopReason = 'finish';
      break;
    }
    const tool = tools.find((candidate) => candidate.name === parsed.action);
    const input =
      tool === undefined || tool.inputSchema.safeParse(parsed.input).success ? parsed.input : parseJson(parsed.input);
    const outcome = await callTool(tools, parsed.action, input);
    const observation = outcome.ok ? outcome.output : outcome.error;
    steps.push({ ...parsed, observation });
    transcript.observe({ role: 'user', content: `Observation: ${observation}` }, { invalidAction: !outcome.ok });
  }
  return {
    steps,
    ...(answer === undefined ? {} : { answer }),
    stopReason,
    trajectory: transcript.toTrajectory({ success: answer !== undefined, truncated: stopReason !== 'finish' }),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
