/**
 * The reward-hacking monitor: every iteration, seven signals that the reward is going up for the
 * wrong reasons (docs/reward-monitor.md), each a statistic with a threshold and a minimum of
 * evidence below which it stays silent. `observe` returns the metrics (`monitor/<signal>`, the
 * statistic when there was evidence, and `monitor/<signal>/fired`, 0 or 1) and the signals that
 * fired, with their reasons; in mode 'stop' it asks the trainer to end the run.
 *
 * The monitor keeps one small summary per iteration it has seen (the baselines of the signals that
 * compare across iterations); it holds no trajectories. A resumed run starts with no history, so
 * the early baselines are those of the resumed iterations.
 */
import type { RewardComponentsSpec } from '../../core/types.ts';
import { episodeView, type EpisodeView } from './episode-view.ts';
import { type MonitorMode, type RewardMonitorConfigInput, rewardMonitorConfigSchema } from './monitor-config.ts';
import type { IterationSummary, MonitorIterationInput, SignalInput, SignalReading } from './monitor-types.ts';
import { answerDominance, answerDominanceStatistic } from './signals/answer-dominance.ts';
import { answerLeakage } from './signals/answer-leakage.ts';
import { entropyCollapse } from './signals/entropy-collapse.ts';
import { formatOnlyReward } from './signals/format-only-reward.ts';
import { lengthDrift } from './signals/length-drift.ts';
import { rewardValidationDivergence } from './signals/reward-validation-divergence.ts';
import { toolOutputParroting } from './signals/tool-output-parroting.ts';
import { mean } from './statistics.ts';

/** The signals' names: the metric keys `monitor/<name>`. */
export const monitorSignals = [
  'reward-validation-divergence',
  'answer-leakage',
  'answer-dominance',
  'format-only-reward',
  'length-drift',
  'entropy-collapse',
  'tool-output-parroting',
] as const;
export type MonitorSignal = (typeof monitorSignals)[number];

export interface FiredSignal {
  signal: MonitorSignal;
  statistic?: number;
  message: string;
}

export interface MonitorReport {
  iteration: number;
  /** `monitor/<signal>` (with evidence), `monitor/<signal>/<value>`, `monitor/<signal>/fired` (0/1). */
  metrics: Record<`monitor/${string}`, number>;
  fired: FiredSignal[];
  /** Every signal's reading, fired or not. */
  readings: Record<MonitorSignal, SignalReading>;
  /** Mode 'stop' and a signal fired: the trainer ends the run after this iteration. */
  stop: boolean;
}

export interface RewardMonitor {
  readonly mode: MonitorMode;
  observe(input: MonitorIterationInput): MonitorReport;
}

export interface RewardMonitorOptions {
  config?: RewardMonitorConfigInput;
  /** The reward's components (an env's `rewardComponents`, a rubric): lets `format-only-reward` tell format from outcome. */
  rewardSpec?: RewardComponentsSpec;
}

/** A monitor with its own history: one per run. */
export function rewardMonitor({ config: input = {}, rewardSpec }: RewardMonitorOptions = {}): RewardMonitor {
  const config = rewardMonitorConfigSchema.parse(input);
  const history: IterationSummary[] = [];
  const read: Record<MonitorSignal, (signal: SignalInput) => SignalReading> = {
    'reward-validation-divergence': (s) => rewardValidationDivergence(s, config.rewardValidationDivergence),
    'answer-leakage': (s) => answerLeakage(s, config.answerLeakage),
    'answer-dominance': (s) => answerDominance(s, config.answerDominance),
    'format-only-reward': (s) => formatOnlyReward(s, config.formatOnlyReward),
    'length-drift': (s) => lengthDrift(s, config.lengthDrift),
    'entropy-collapse': (s) => entropyCollapse(s, config.entropyCollapse),
    'tool-output-parroting': (s) => toolOutputParroting(s, config.toolOutputParroting),
  };
  return {
    mode: config.mode,
    observe(current) {
      const episodes = current.episodes.map(episodeView);
      const summary = summarize(current, episodes, (views) => answerDominanceStatistic(views, config.answerDominance));
      const signalInput: SignalInput = {
        current,
        summary,
        episodes,
        history: [...history],
        rewardSpec: current.rewardSpec ?? rewardSpec,
      };
      const readings = Object.fromEntries(monitorSignals.map((name) => [name, read[name](signalInput)])) as Record<
        MonitorSignal,
        SignalReading
      >;
      history.push(summary);
      const fired = config.mode === 'off' ? [] : firedSignals(readings);
      return {
        iteration: current.iteration,
        metrics: monitorMetrics(readings),
        fired,
        readings,
        stop: config.mode === 'stop' && fired.length > 0,
      };
    },
  };
}

function summarize(
  current: MonitorIterationInput,
  episodes: readonly EpisodeView[],
  dominance: (episodes: readonly EpisodeView[]) => number | undefined,
): IterationSummary {
  const answerDominance = dominance(episodes);
  const withTurns = episodes.filter((e) => e.episode.turns.length > 0);
  return {
    iteration: current.iteration,
    reward: episodes.length === 0 ? NaN : mean(episodes.map((e) => e.reward)),
    ...(current.validationSuccess === undefined ? {} : { validationSuccess: current.validationSuccess }),
    ...(current.entropy === undefined ? {} : { entropy: current.entropy }),
    ...(withTurns.length === 0 ? {} : { replyChars: mean(withTurns.map((e) => e.replyChars)) }),
    ...(answerDominance === undefined ? {} : { answerDominance }),
    distinctAnswers: new Set(episodes.map((e) => e.answer).filter((a) => a !== '')).size,
  };
}

function firedSignals(readings: Record<MonitorSignal, SignalReading>): FiredSignal[] {
  return monitorSignals
    .filter((signal) => readings[signal].fired)
    .map((signal) => {
      const { statistic, message } = readings[signal];
      return statistic === undefined ? { signal, message } : { signal, statistic, message };
    });
}

function monitorMetrics(readings: Record<MonitorSignal, SignalReading>): Record<`monitor/${string}`, number> {
  const metrics: Record<`monitor/${string}`, number> = {};
  for (const signal of monitorSignals) {
    const { statistic, values = {}, fired } = readings[signal];
    if (statistic !== undefined && Number.isFinite(statistic)) metrics[`monitor/${signal}`] = statistic;
    for (const [name, value] of Object.entries(values)) {
      if (Number.isFinite(value)) metrics[`monitor/${signal}/${name}`] = value;
    }
    metrics[`monitor/${signal}/fired`] = fired ? 1 : 0;
  }
  return metrics;
}
