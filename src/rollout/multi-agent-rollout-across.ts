/**
 * One generate call per turn for roles played by LoRA forks of one base (engine/generate-across.ts):
 * the multi-agent rollout's turn (multi-agent-rollout.ts `playTurn`) hands every acting policy's
 * requests here; when there are two or more policies and all are `BuiltinPolicy`s whose models are
 * forks of one base (transformer-model.ts `forkAdapters`, the same session options), every role's
 * rows go into ONE `generateAcross` call, each row sampled with its own role's adapters. Otherwise
 * (other policies, separate bases, one policy this turn) it answers null and the rollout calls each
 * policy's `generateBatch`.
 *
 * Each policy's requests are resolved, grouped by sampling options and turned into generations as
 * `BuiltinPolicy.generateBatch` does (policy/request.ts: resolveRequest, groupBySampling,
 * generationText; the tokenizer's spare ids never sampled), so a role's replies are those its
 * policy's own `generateBatch` returns for the same requests (up to float rounding).
 */
import { at } from '../core/indexing.ts';
import { forksOfOneBase, generateAcross, type AcrossGroup } from '../engine/generate-across.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { decodeGenerated, generationText, groupBySampling, resolveRequest } from '../policy/request.ts';
import type { GenerateRequest, Generation, Policy } from '../policy/types.ts';

/** One policy's requests of a turn. */
export interface PolicyRequests {
  policy: Policy;
  requests: readonly GenerateRequest[];
}

/** A sampling group of one policy: where its rows go back to. */
interface Placement {
  batch: number;
  indices: readonly number[];
  request: ReturnType<typeof resolveRequest>;
  policy: BuiltinPolicy;
}

/** Every batch's generations from one `generateAcross` call, or null when the policies cannot share one. */
export async function generateAcrossForks(batches: readonly PolicyRequests[]): Promise<Generation[][] | null> {
  if (batches.length < 2) return null;
  const policies = batches.map((batch) => batch.policy);
  if (!policies.every((policy): policy is BuiltinPolicy => policy instanceof BuiltinPolicy)) return null;
  if (!(await forksOfOneBase(policies.map((policy) => policy.model)))) return null;
  const groups: AcrossGroup[] = [];
  const placements: Placement[] = [];
  batches.forEach(({ requests }, b) => {
    const policy = at(policies, b);
    const resolved = requests.map((request) =>
      resolveRequest(request, policy.tokenizer, policy.contextWindow, policy.model.config.vocabSize),
    );
    for (const indices of groupBySampling(resolved)) {
      const request = at(resolved, at(indices, 0));
      placements.push({ batch: b, indices, request, policy });
      groups.push({
        model: policy.model,
        prompts: indices.map((i) => at(resolved, i).prompt),
        options: {
          maxNewTokens: request.maxNewTokens,
          temperature: request.temperature,
          topP: request.topP,
          stopTokens: request.stopTokens,
          stopStrings: request.stopStrings,
          decode: (ids) => decodeGenerated(policy.tokenizer, ids),
          seed: request.seed,
          maxTokenId: policy.tokenizer.vocabSize, // spare ids of the model's vocabulary are never sampled
        },
      });
    }
  });
  const rows = await generateAcross(groups);
  const generations = batches.map(({ requests }) => new Array<Generation>(requests.length));
  placements.forEach(({ batch, indices, request, policy }, g) => {
    at(rows, g).forEach((row, k) => {
      at(generations, batch)[at(indices, k)] = {
        tokens: row.tokens,
        logprobs: row.logprobs,
        text: generationText(row.tokens, row.finishReason, request, policy.tokenizer),
        finishReason: row.finishReason,
      };
    });
  });
  return generations;
}
