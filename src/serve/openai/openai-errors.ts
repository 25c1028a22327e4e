/** OpenAI-shaped errors for the policy server and the training gateway (the mapping lives in ../error-bodies.ts). */
export { openAiErrorBody, openAiErrorResponse, RequestError } from '../error-bodies.ts';
