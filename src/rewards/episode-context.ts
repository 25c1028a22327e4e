/**
 * What a reward function sees when the trainer (or the gateway) scores a finished episode: the
 * token-level trajectory (turns with each action's and observation's text, the env's own reward and
 * its named components), the first observation's text, and — trainer side only — the task and what
 * only the env and the trainer may know (`Observation.privileged` at reset: answers, hidden tests).
 * The agent never sees `privileged`; a reward may.
 */
import type { Trajectory } from '../core/types.ts';

export interface EpisodeContext<Task = unknown> {
  readonly trajectory: Trajectory;
  /** The first observation's text (the task as the agent was given it). */
  readonly prompt: string;
  readonly task?: Task;
  readonly privileged?: Readonly<Record<string, unknown>>;
}

/** The policy's last reply (the final turn's action text), '' for an episode without turns. */
export function finalReply(context: EpisodeContext): string {
  return context.trajectory.turns.at(-1)?.action ?? '';
}
