/** Errors of the rollout engine (the generic ones live in src/core/errors.ts). */
import { AgentRlError } from '../core/errors.ts';

/** What a rollout measured about first prompts that do not fit the context window. */
export interface PromptFit {
  /** Episodes whose first prompt did not fit, and all episodes. */
  episodes: number;
  total: number;
  /** Token lengths of those first prompts. */
  shortestPrompt: number;
  longestPrompt: number;
  contextWindow: number;
  maxNewTokens: number;
}

/** The window that would hold the longest of these prompts plus a full reply. */
function neededWindow(fit: PromptFit): number {
  return fit.longestPrompt + fit.maxNewTokens + 1;
}

/** What to change, in one sentence (shared by the error and the warning). */
export function promptFitAdvice(fit: PromptFit): string {
  const lengths =
    fit.shortestPrompt === fit.longestPrompt ? `${fit.longestPrompt}` : `${fit.shortestPrompt}–${fit.longestPrompt}`;
  return (
    `the first prompt is ${lengths} tokens and the context window of ${fit.contextWindow} must also hold maxNewTokens (${fit.maxNewTokens}) + 1; ` +
    `raise the model's maxSeqLen to at least ${neededWindow(fit)}, lower maxNewTokens, or shorten the prompt (instructions: false leaves out env.instructions)`
  );
}

/** No episode of a rollout could start: every first prompt leaves no room for a reply in the context window. */
export class PromptTooLongError extends AgentRlError {
  constructor(fit: PromptFit) {
    super('PROMPT_TOO_LONG', `none of the ${fit.total} episodes can start: ${promptFitAdvice(fit)}`, {
      ...fit,
      neededWindow: neededWindow(fit),
    });
  }
}
