/**
 * Several roles' policies over ONE frozen base: restores policies from `saveState` bytes so that
 * built-in LoRA policies share a base — the first through the backend's own restore, every later
 * one as a fork of the first's model (`TransformerModel.forkAdapters`: the same host base arrays
 * and the same generation session, its own adapters, AdamW moments and RNG) with its state loaded
 * (adapters and optimizer moments). N roles then cost one base plus N adapters and their moments
 * (docs/multi-agent.md has the measured figure). Anything else — full fine-tuning (each role its
 * own weights by definition), a Tinker training client — is restored through the backend, each
 * its own.
 *
 *   const restore = sharedBaseRestorer((state) => backend.restorePolicy(state));
 *   const alice = await restore(aliceState); // restored: holds the base
 *   const bob = await restore(bobState);     // a fork of alice's model: its own adapters, same base
 *
 * Given a `holder` (a LoRA run's starting policy), every restore is a fork of its model: a run
 * then holds its base once, however many times it restores (resume, the KL or DPO reference).
 */
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import type { TrainablePolicy } from '../../policy/types.ts';

/** A restore that forks LoRA built-in policies off the first one it restored (see the file header). */
export function sharedBaseRestorer(
  restore: (state: Uint8Array) => Promise<TrainablePolicy>,
  {
    holder,
  }: {
    /** A policy already holding the base (a run's starting policy): restores fork it from the first one on. */
    holder?: () => TrainablePolicy | undefined;
  } = {},
): (state: Uint8Array) => Promise<TrainablePolicy> {
  let parent: BuiltinPolicy | undefined;
  return async (state) => {
    const held = holder?.();
    if (parent === undefined && held instanceof BuiltinPolicy && held.model.lora !== null) parent = held;
    if (parent === undefined) {
      const policy = await restore(state);
      if (policy instanceof BuiltinPolicy && policy.model.lora !== null) parent = policy;
      return policy;
    }
    const fork = new BuiltinPolicy({
      model: await parent.model.forkAdapters(),
      tokenizer: parent.tokenizer,
      ...(parent.chatFormat === undefined ? {} : { chatFormat: parent.chatFormat }),
    });
    await fork.loadState(state);
    return fork;
  };
}
