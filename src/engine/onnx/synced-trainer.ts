/**
 * An `OnnxLoraTrainer` kept in step with a `TransformerModel` that holds the policy's state:
 * the trainer runs the LoRA steps on onnxruntime, and after each optimizer step its adapters and
 * AdamW moments (and step counter) are written back to the model, so everything that reads the
 * model — save (merged weights), saveState, an ORT sampler synced to `model.step` — sees them.
 * Before use, the trainer pulls the model's adapters and moments when they changed behind it
 * (`markStale`, e.g. after loadState) or the step counters differ.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import type { TokenLoss } from '../../core/loss.ts';
import type { OptimOptions } from '../../model/adamw.ts';
import type { LossReport, StepReport, TransformerModel } from '../../model/model.ts';
import { OnnxLoraTrainer } from './onnx-lora-trainer.ts';
import type { OnnxTrainerOptions } from './train-runs.ts';

export class SyncedOnnxTrainer {
  private trainer: Promise<OnnxLoraTrainer> | null = null;
  private syncedStep = -1;
  private stale = false;

  constructor(
    private readonly model: TransformerModel,
    private readonly options: OnnxTrainerOptions = {},
  ) {
    if (model.lora === null) {
      throw new InvalidArgumentError(
        "training: 'onnx' trains LoRA adapters only; create the model with lora (e.g. { rank: 16, alpha: 32 }) or train on 'jax'",
      );
    }
    if (model.lora.dropout > 0) {
      throw new InvalidArgumentError(
        `training: 'onnx' has no adapter dropout (lora.dropout ${model.lora.dropout}); set dropout 0 or train on 'jax'`,
      );
    }
  }

  /** The model's adapters or moments changed outside this trainer (loadState, setAdapters). */
  markStale(): void {
    this.stale = true;
  }

  private async current(): Promise<OnnxLoraTrainer> {
    if (this.trainer === null) {
      const model = this.model;
      this.trainer = (async () =>
        OnnxLoraTrainer.create({
          config: model.config,
          params: await model.baseParams(),
          lora: model.lora!,
          adapters: await model.adapterParams(),
          options: this.options,
        }))();
      this.stale = true;
    }
    const trainer = await this.trainer;
    if (this.stale || this.syncedStep !== this.model.step) {
      trainer.zeroGradients();
      trainer.setAdapters(await this.model.adapterParams());
      trainer.loadOptimizerState(await this.model.optimizerState());
      this.syncedStep = this.model.step;
      this.stale = false;
    }
    return trainer;
  }

  /** Writes the trainer's adapters, moments and step into the model. */
  private publish(trainer: OnnxLoraTrainer): void {
    this.model.setAdapters(trainer.adapterParams());
    this.model.loadOptimizerState(trainer.optimizerState());
    this.syncedStep = this.model.step;
  }

  async forwardBackward(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    temperature: number,
  ): Promise<LossReport> {
    return (await this.current()).forwardBackward(sequences, loss, { temperature });
  }

  async optimStep(options: OptimOptions): Promise<{ gradNorm: number; step: number }> {
    const trainer = await this.current();
    const report = trainer.optimStep(options);
    this.publish(trainer);
    return report;
  }

  async trainStep(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    options: OptimOptions & { temperature: number },
  ): Promise<StepReport> {
    const trainer = await this.current();
    const report = await trainer.trainStep(sequences, loss, options);
    this.publish(trainer);
    return report;
  }

  async release(): Promise<void> {
    if (this.trainer !== null) await (await this.trainer).release();
    this.trainer = null;
  }
}
