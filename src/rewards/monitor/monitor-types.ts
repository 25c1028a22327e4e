/**
 * What the reward-hacking monitor reads of an iteration, and what each of its signals says.
 *
 * The input is the trainer's own data with nothing extra to compute: the iteration's episodes (a
 * core `Trajectory` is one: turns with each reply's and observation's text, the total reward, the
 * success flag, the named reward components), the policy's mean token entropy, the validation
 * success when the iteration was validated, and the reward's components spec (names, weights,
 * kinds — an env's `rewardComponents` or a rubric) so format terms can be told from outcome terms.
 */
import type { RewardComponentsSpec } from '../../core/types.ts';
import type { EpisodeView } from './episode-view.ts';

/** One turn: the policy's reply and the observation that followed it. */
export interface MonitoredTurn {
  readonly action: string;
  readonly observation: string;
}

/** One finished episode (a core `Trajectory` satisfies it). */
export interface MonitoredEpisode {
  /** Episodes of one task share it. */
  readonly groupId: string;
  readonly turns: readonly MonitoredTurn[];
  readonly totalReward: number;
  readonly success: boolean;
  /** Reward by named component, summed over the episode (raw values, weighted by the spec). */
  readonly rewardComponents?: Readonly<Record<string, number>>;
  /** The first observation's text (the task as the agent saw it), when the caller has it. */
  readonly prompt?: string;
}

/** One iteration as the monitor sees it. */
export interface MonitorIterationInput {
  readonly iteration: number;
  /** Every episode generated this iteration (dropped groups included: they are evidence too). */
  readonly episodes: readonly MonitoredEpisode[];
  /** Mean per-token entropy of the policy this iteration (nats); NaN or absent when not measured. */
  readonly entropy?: number;
  /** Held-out (validation) success, on the iterations that were validated. */
  readonly validationSuccess?: number;
  /** The reward's components spec for this iteration (a rubric's), over the monitor's own. */
  readonly rewardSpec?: RewardComponentsSpec;
}

/** What one signal read from one iteration. */
export interface SignalReading {
  /** The signal's statistic (metric `monitor/<signal>`); undefined when there is too little evidence to compute it. */
  readonly statistic?: number;
  /** Further named values (metric `monitor/<signal>/<name>`). */
  readonly values?: Readonly<Record<string, number>>;
  readonly fired: boolean;
  /** Why it fired (or what it measured), in words with the numbers. */
  readonly message: string;
}

/** The numbers an iteration leaves behind for the signals that compare across iterations. */
export interface IterationSummary {
  readonly iteration: number;
  /** Mean total reward of the iteration's episodes. */
  readonly reward: number;
  readonly validationSuccess?: number;
  readonly entropy?: number;
  /** Mean characters per reply. */
  readonly replyChars?: number;
  /** The answer-dominance statistic, when it had evidence. */
  readonly answerDominance?: number;
  /** Distinct final answers among the iteration's episodes. */
  readonly distinctAnswers: number;
}

/** Everything a signal reads: this iteration, its episodes prepared once, the earlier iterations' summaries. */
export interface SignalInput {
  readonly current: MonitorIterationInput;
  readonly summary: IterationSummary;
  readonly episodes: readonly EpisodeView[];
  /** Earlier iterations, oldest first (this one not included). */
  readonly history: readonly IterationSummary[];
  readonly rewardSpec?: RewardComponentsSpec;
}
