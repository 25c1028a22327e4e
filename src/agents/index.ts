export { Transcript, clip, rewardFinalTurn } from './transcript.ts';
export type { AgentSampling } from './transcript.ts';
export { TokenTranscript, replyClosing } from './token-transcript.ts';
export type { ReplyTokens, TranscriptEnding } from './token-transcript.ts';
export { callTool, describeTools, listTools } from './tools.ts';
export type { ToolOutcome } from './tools.ts';
export { hasFinalAnswer, hasToolCall, stepCountIs } from './stop-conditions.ts';
export type { StopCondition, ToolResult, ToolStep } from './stop-conditions.ts';
export { runToolLoop } from './tool-calling.ts';
export type { ToolLoopOptions, ToolLoopResult } from './tool-calling.ts';
export { parseReActReply, reactInstructions, runReAct } from './react.ts';
export type { ReActOptions, ReActResult, ReActStep } from './react.ts';
export { describeReAct, reflectionPrompt, reflectionsText, runReflexion } from './reflexion.ts';
export type { ReflexionOptions, ReflexionResult, ReflexionTrial, TrialOutcome } from './reflexion.ts';
export {
  defaultPrompts as treeOfThoughtsPrompts,
  parseValue,
  parseVote,
  runTreeOfThoughts,
  VALUES as thoughtValues,
} from './tree-of-thoughts.ts';
export type {
  StateEvaluator,
  ThoughtGenerator,
  ThoughtNode,
  ThoughtProblem,
  ThoughtSearch,
  TreeOfThoughtsOptions,
  TreeOfThoughtsResult,
} from './tree-of-thoughts.ts';
export { defaultMctsPrompts, runMcts, uct } from './mcts.ts';
export type { MctsNode, MctsOptions, MctsProblem, MctsResult } from './mcts.ts';
export { MemGPTAgent } from './memgpt.ts';
export type { MemGPTOptions, MemGPTStep, MemGPTTurn } from './memgpt.ts';
export { MemoryStore, formatPage } from './memory-store.ts';
export type { SearchPage, StoredEntry } from './memory-store.ts';
