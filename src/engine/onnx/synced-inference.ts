/**
 * An `OnnxInference` kept in step with a training `TransformerModel`: made on first use, and
 * refreshed from the model (adapters under LoRA, else the weights) before the first use after
 * its weights changed — after an optimizer step (`model.step` moved) or when told (`markStale`,
 * e.g. after loading a state).
 */
import type { TransformerModel } from '../../model/model.ts';
import { OnnxInference, type OnnxInferenceOptions } from './onnx-inference.ts';

export class SyncedOnnxInference {
  private inference: Promise<OnnxInference> | null = null;
  private syncedStep = -1;
  private stale = false;

  constructor(
    private readonly model: TransformerModel,
    private readonly options: OnnxInferenceOptions = {},
  ) {}

  /** The weights changed outside an optimizer step (setParams, setAdapters, loadState). */
  markStale(): void {
    this.stale = true;
  }

  /** The inference with the model's current weights. */
  async current(): Promise<OnnxInference> {
    if (this.inference === null) {
      this.syncedStep = this.model.step;
      this.stale = false;
      this.inference = OnnxInference.fromModel(this.model, this.options);
      return this.inference;
    }
    const inference = await this.inference;
    if (this.stale || this.syncedStep !== this.model.step) {
      this.syncedStep = this.model.step;
      this.stale = false;
      await inference.refreshFrom(this.model);
    }
    return inference;
  }

  async release(): Promise<void> {
    if (this.inference !== null) await (await this.inference).release();
    this.inference = null;
  }
}
