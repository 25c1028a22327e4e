/**
 * `generateAcross`: the rows of several LoRA forks of one base (transformer-model.ts
 * `forkAdapters`) sampled in ONE batched call — each row with its own fork's adapters, each group
 * with its own options (seed, stops, temperature, budget) — returning per group what
 * `generate(group.model, group.prompts, group.options)` returns (token ids equal up to float
 * rounding; log-probs within 1e-5 in the tests). A multi-agent env's roles played by forks take one
 * decode run per token for all roles' rows instead of one per role.
 *
 *   const [aliceRows, bobRows] = await generateAcross([
 *     { model: alice, prompts: alicePrompts, options: { maxNewTokens: 32, seed: 1 } },
 *     { model: bob, prompts: bobPrompts, options: { maxNewTokens: 32, seed: 1 } },
 *   ]);
 *
 * How: the rows are sorted by group; a grouped session (graph: model-graph.ts `adapterGroups`)
 * splits each adapted linear's input along the batch by the rows per group, runs each part through
 * its own A·B and joins them — no per-row copy of the adapters. Groups without rows are skipped;
 * when one group is left it runs on its model's own session, as `generate` would. The forks'
 * session stays the plain graph until the first call with several groups; that call replaces it
 * by a grouped session and moves every fork onto it (shared-base.ts `groupedSession`): one copy of
 * the base in onnxruntime either way (peak RSS measured in docs/multi-agent.md).
 *
 * Refused: models that are not LoRA forks of one base (with the same session options), with an
 * error naming the group that differs.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { GeneratedRow, GenerateOptions } from '../model/generate-options.ts';
import type { OnnxInference } from './onnx/onnx-inference.ts';
import { inferenceOptionsKey, type SharedBase } from './shared-base.ts';
import type { TransformerModel } from './transformer-model.ts';

/** One fork's prompts and its sampling options. */
export interface AcrossGroup {
  model: TransformerModel;
  prompts: readonly (readonly number[])[];
  options: GenerateOptions;
}

/** Why `models` cannot generate together (naming the first one that differs), or null when they can. */
function refusal(models: readonly TransformerModel[], members: readonly OnnxInference[]): string | null {
  const first = at(members, 0).origin;
  for (const [g, member] of members.entries()) {
    if (at(models, g).lora === null)
      return `group ${g}'s model trains its full weights; only LoRA forks of one base (forkAdapters) generate together`;
    if (first === null || member.origin?.base !== first.base)
      return `group ${g}'s model does not share group 0's base; make the models with forkAdapters of one model (or generate each with generate())`;
    if (inferenceOptionsKey(member.origin.options) !== inferenceOptionsKey(first.options))
      return `group ${g}'s model generates with other session options (threads, baseQuantization) than group 0's`;
  }
  return null;
}

/** Whether `models` can generate together (`generateAcross`): LoRA forks of one base, the same session options. */
export async function forksOfOneBase(models: readonly TransformerModel[]): Promise<boolean> {
  if (models.length === 0) return false;
  const members = await Promise.all(models.map((model) => model.inferenceSession()));
  return refusal(models, members) === null;
}

export async function generateAcross(groups: readonly AcrossGroup[]): Promise<GeneratedRow[][]> {
  if (groups.length === 0) return [];
  // Every group's current session and adapters (refreshed after an optimizer step), checked first.
  const members = await Promise.all(groups.map((group) => group.model.inferenceSession()));
  const reason = refusal(
    groups.map((group) => group.model),
    members,
  );
  if (reason !== null) throw new InvalidArgumentError(`generateAcross: ${reason}`);
  const base = at(members, 0).origin!.base as SharedBase;
  const filled = groups.flatMap((group, g) => (group.prompts.length > 0 ? [g] : []));
  const results: GeneratedRow[][] = groups.map(() => []);
  if (filled.length === 1) {
    const g = at(filled, 0);
    results[g] = await at(members, g).generate(at(groups, g).prompts, at(groups, g).options);
  } else if (filled.length > 1) {
    const grouped = await base.groupedSession(at(members, 0).origin!.options, filled.length);
    const rows = await grouped.generateGroups(
      filled.map((g) => ({ member: at(members, g), prompts: at(groups, g).prompts, options: at(groups, g).options })),
    );
    filled.forEach((g, k) => {
      results[g] = at(rows, k);
    });
  }
  return results;
}
