/**
 * `SharedBase`: the frozen base weights of a model and of its LoRA forks
 * (transformer-model.ts `forkAdapters`), held once on the host, and per set of generation options
 * one onnxruntime session with them as initializers (pre-packed once). Each member model runs that
 * session through its own `OnnxInference` (`withAdapters`: its own adapters, fed per run); the
 * session is released when the last member using those options lets go.
 *
 * Generation across forks (generate-across.ts): a session starts as the plain graph (a member's
 * own calls run exactly as without forks). The first call that carries several members' rows
 * replaces it by a grouped session (onnx-inference.ts `createGroups`, at least MIN_GROUPS adapter
 * sets, more if the call needs more) and moves every member's inference onto it (`moveTo`): from
 * then on each member's own calls run there with all their rows in set 0 (the same numbers), and
 * the base has one copy in onnxruntime again once calls on the old session end.
 *
 * Without forks a base has one member; under full fine-tuning its weights change after every step,
 * and the member leaves its session and acquires a new one over the updated weights.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { HostParams, ModelConfig } from '../model/config.ts';
import { loraShapes, type LoraConfig } from '../model/lora.ts';
import { OnnxInference, type OnnxInferenceOptions } from './onnx/onnx-inference.ts';

/** The fewest adapter sets of a grouped session: two roles' rows in one call. */
export const MIN_GROUPS = 2;

interface SessionEntry {
  /** The inference that made the session; members run `withAdapters` views of it. */
  template: Promise<OnnxInference>;
  /** Member inferences on it. */
  users: number;
  /** The member inferences handed out (moved together onto a grouped session). */
  members: Set<OnnxInference>;
  /** A running replacement of the template by a grouped session. */
  upgrade: Promise<OnnxInference> | null;
}

/** A stable key for inference options (field order does not matter; undefined fields drop out). */
export function inferenceOptionsKey(options: OnnxInferenceOptions): string {
  return JSON.stringify(Object.fromEntries(Object.entries(options).sort(([a], [b]) => a.localeCompare(b))));
}

export class SharedBase {
  /** True once a model forked adapters over this base: from then on the weights are frozen for good. */
  forked = false;
  private readonly sessions = new Map<string, SessionEntry>();

  constructor(
    readonly config: ModelConfig,
    /** The weights (config.ts names), shared by every member; never copied here. */
    readonly weights: HostParams,
    readonly lora: LoraConfig | null,
  ) {}

  /** Generation sessions alive over this base (one per set of options some member uses). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** An inference with `adapters` (LoRA; none without) on this base's session for `options`, made on first use. */
  async acquire(options: OnnxInferenceOptions, adapters: HostParams | undefined): Promise<OnnxInference> {
    const key = inferenceOptionsKey(options);
    let entry = this.sessions.get(key);
    if (entry === undefined) {
      const template = OnnxInference.create({
        config: this.config,
        params: this.weights,
        lora: this.lora,
        adapters,
        options,
      });
      entry = { template, users: 0, members: new Set(), upgrade: null };
      this.sessions.set(key, entry);
    }
    entry.users += 1;
    try {
      await entry.upgrade?.catch(() => null); // a member made during an upgrade joins the new session
      const inference = (await entry.template).withAdapters(adapters);
      inference.origin = { base: this, options };
      entry.members.add(inference);
      return inference;
    } catch (error) {
      await this.dropUser(key, entry);
      throw error;
    }
  }

  /** Releases a member's inference acquired for `options`; the session goes with its last user. */
  async leave(options: OnnxInferenceOptions, inference: OnnxInference): Promise<void> {
    const key = inferenceOptionsKey(options);
    const entry = this.sessions.get(key);
    entry?.members.delete(inference); // before its release: an upgrade never moves a released member
    await inference.release();
    if (entry !== undefined) await this.dropUser(key, entry);
  }

  /**
   * The session for `options` as a grouped graph with at least `groups` adapter sets (LoRA only):
   * the current one when it has them, else a new one that replaces it, every member moved onto it.
   * A member of this base must hold the options' session (`acquire`).
   */
  async groupedSession(options: OnnxInferenceOptions, groups: number): Promise<OnnxInference> {
    const entry = this.sessions.get(inferenceOptionsKey(options));
    if (entry === undefined || this.lora === null)
      throw new InvalidArgumentError(
        'groupedSession: no member of this base generates with these options (or the base has no LoRA)',
      );
    await entry.upgrade?.catch(() => null);
    const template = await entry.template;
    if (entry.upgrade !== null) return this.groupedSession(options, groups); // another call began one meanwhile
    if (template.adapterGroups >= groups) return template;
    entry.upgrade = this.replaceByGrouped(entry, template, options, Math.max(groups, MIN_GROUPS));
    try {
      return await entry.upgrade;
    } finally {
      entry.upgrade = null;
    }
  }

  /**
   * Frees the plain session first (members and the template let go of it; a call running on it
   * keeps it until it ends), then builds the grouped one and moves the members onto it: the base
   * is never in onnxruntime twice but for such a call. Should the grouped build fail, the members
   * get a plain session again and the error is thrown.
   */
  private async replaceByGrouped(
    entry: SessionEntry,
    template: OnnxInference,
    options: OnnxInferenceOptions,
    groups: number,
  ): Promise<OnnxInference> {
    const { config, weights: params } = this;
    const lora = this.lora!;
    let ready = (_: Promise<OnnxInference>): void => {};
    const next = new Promise<OnnxInference>((resolve) => {
      ready = resolve;
    });
    const moves = [...entry.members].map((member) => member.moveTo(next));
    await template.release();
    const grouped = OnnxInference.createGroups({ config, params, lora, groups, options });
    const replacement = grouped.catch(() =>
      OnnxInference.create({ config, params, lora, adapters: zeroAdapters(config, lora), options }),
    );
    ready(replacement);
    entry.template = replacement;
    await Promise.all(moves);
    return grouped;
  }

  private async dropUser(key: string, entry: SessionEntry): Promise<void> {
    entry.users -= 1;
    if (entry.users > 0) return;
    if (this.sessions.get(key) === entry) this.sessions.delete(key);
    const template = await entry.template.catch(() => null); // a failed creation holds nothing
    await template?.release();
  }
}

/** Zero adapters of every LoRA shape (a plain session's template needs some; members feed their own). */
function zeroAdapters(config: ModelConfig, lora: LoraConfig): HostParams {
  return new Map(
    [...loraShapes(config, lora)].map(([name, shape]) => [
      name,
      { shape, data: new Float32Array(shape.reduce((size, d) => size * d, 1)) },
    ]),
  );
}
