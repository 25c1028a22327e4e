/**
 * A curriculum for the calculator, easy → hard: a list of stages, each a few option overrides —
 * the operands (`smallOperand`, `minOperand`, `maxOperand`) and the question's wording (`question`:
 * e.g. a few-shot scaffold that later stages fade) — the last one the task itself. Training starts
 * on stage 0 and moves to the next stage when the mean train success of the last `window`
 * iterations reaches `advanceAt` (0: every `window` iterations, a fixed schedule); it never moves
 * back. The default stages lead to two 2-digit operands through one operand of 2–9, then 10–19,
 * then 10–49 (7 * 43 → 13 * 43 → 37 * 43 → 67 * 43).
 *
 * Replay: the stage is a function of the success sequence observed (and `state()` resumes it), and
 * a stage's task for a seed is the env's seeded draw — the same run replays the same tasks.
 *
 *   const curriculum = new CalculatorCurriculum();
 *   runRl({ env: () => makeCalculator({ ...task, ...curriculum.stageOptions() }),
 *           onIteration: (m) => curriculum.observe(m.success), … });
 *
 * Evaluate on the task itself (`makeCalculator(task)`), not on the current stage.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../core/index.ts';
import { parseOptions } from '../options.ts';
import type { CalculatorOptions } from './env.ts';

const operandRange = z.strictObject({ min: z.number().int().min(0).max(1000), max: z.number().int().min(0).max(1000) });

/** One stage: the option overrides its tasks are drawn with (`{}` = the task itself). */
export const curriculumStageSchema = z.strictObject({
  /** One operand drawn from this range (see the env's `smallOperand`). */
  smallOperand: operandRange.optional(),
  /** The other operands' smallest value. */
  minOperand: z.number().int().min(0).max(1000).optional(),
  /** The other operands' largest value. */
  maxOperand: z.number().int().min(1).max(1000).optional(),
  /** The question's wording, with `{expression}` (see the env's `question`). */
  question: z
    .string()
    .refine((text) => text.includes('{expression}'), 'question must contain {expression}')
    .optional(),
});
export type CurriculumStage = z.infer<typeof curriculumStageSchema>;

/** Two 2-digit operands, reached through one smaller operand (the tool-required multiplication of bench:real). */
export const defaultOperandStages: readonly CurriculumStage[] = [
  { smallOperand: { min: 2, max: 9 } },
  { smallOperand: { min: 10, max: 19 } },
  { smallOperand: { min: 10, max: 49 } },
  {},
];

/** The curriculum's stages and when it moves on. */
export const calculatorCurriculumSchema = z.strictObject({
  /** The stages, easiest first; the last is the task itself. */
  stages: z
    .array(curriculumStageSchema)
    .min(1)
    .default([...defaultOperandStages]),
  /** Mean train success over the window that moves training to the next stage (0: a fixed schedule, a new stage every `window` iterations). */
  advanceAt: z.number().min(0).max(1).default(0.5),
  /** Iterations whose train success is averaged (each stage's first `window` iterations never advance). */
  window: z.number().int().positive().default(2),
});
export type CalculatorCurriculumOptions = z.input<typeof calculatorCurriculumSchema>;

/** What resuming needs: the stage, and the train successes of the iterations played on it so far (last `window`). */
export interface CalculatorCurriculumState {
  stage: number;
  recent: number[];
}

export class CalculatorCurriculum {
  private readonly settings: z.output<typeof calculatorCurriculumSchema>;
  private current: number;
  private recent: number[];

  constructor(options: CalculatorCurriculumOptions = {}, state?: CalculatorCurriculumState) {
    this.settings = parseOptions(calculatorCurriculumSchema, options, 'calculator curriculum');
    const last = this.settings.stages.length - 1;
    if (state !== undefined && !(Number.isInteger(state.stage) && state.stage >= 0 && state.stage <= last))
      throw new InvalidArgumentError(`calculator curriculum: resumed stage ${state.stage} is not one of 0…${last}`);
    this.current = state?.stage ?? 0;
    this.recent = [...(state?.recent ?? [])].slice(-this.settings.window);
  }

  /** The stage training is on (0 = easiest). */
  get stage(): number {
    return this.current;
  }

  /** The number of stages (the last is the task itself). */
  get stages(): number {
    return this.settings.stages.length;
  }

  /** The env option overrides of the current stage. */
  stageOptions(): Pick<CalculatorOptions, 'smallOperand' | 'minOperand' | 'maxOperand' | 'question'> {
    return { ...this.settings.stages[this.current] };
  }

  /** Counts one iteration's train success (0–1); returns true when it moved training to the next stage. */
  observe(success: number): boolean {
    if (!(Number.isFinite(success) && success >= 0 && success <= 1))
      throw new InvalidArgumentError(`calculator curriculum: success ${success} is not a rate in [0, 1]`);
    this.recent = [...this.recent, success].slice(-this.settings.window);
    const full = this.recent.length === this.settings.window;
    const mean = this.recent.reduce((sum, value) => sum + value, 0) / this.recent.length;
    if (!full || mean < this.settings.advanceAt || this.current === this.settings.stages.length - 1) return false;
    this.current += 1;
    this.recent = [];
    return true;
  }

  state(): CalculatorCurriculumState {
    return { stage: this.current, recent: [...this.recent] };
  }

  /** `curriculum/stage` (0 = easiest) for an iteration's scalar metrics. */
  metrics(): Record<string, number> {
    return { 'curriculum/stage': this.current };
  }
}
