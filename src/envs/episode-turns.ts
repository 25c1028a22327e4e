/**
 * The opening and closing every env's `step` shares:
 *
 *   const episode = openTurn(this.name, this.episode);      // typed errors before reset / after the end; turnsUsed + 1
 *   …the env's own move…
 *   return { observation, reward, ...closeTurn(episode, this.options.maxTurns, { invalidAction: false }) };
 *
 * `closeTurn` is for a turn that did not end the episode itself: when it used the last of
 * `maxTurns` turns the episode is truncated (it ends, and `info.success` is false). Envs that count
 * moves rather than turns (the grid puzzles, grid-turn.ts) or have one turn (bandit) open with
 * `runningEpisode` alone.
 */
import { EpisodeEndedError, EpisodeNotStartedError } from '../core/errors.ts';

/** An episode whose turns are counted. */
export interface CountedEpisode {
  turnsUsed: number;
  ended: boolean;
}

/** The episode a `step` acts on: throws `EpisodeNotStartedError` before `reset`, `EpisodeEndedError` after the end. */
export function runningEpisode<Episode extends { ended: boolean }>(envName: string, episode: Episode | null): Episode {
  if (episode === null) throw new EpisodeNotStartedError(envName);
  if (episode.ended) throw new EpisodeEndedError(envName);
  return episode;
}

/** The running episode (as `runningEpisode`), with this turn counted. */
export function openTurn<Episode extends CountedEpisode>(envName: string, episode: Episode | null): Episode {
  const running = runningEpisode(envName, episode);
  running.turnsUsed++;
  return running;
}

/** What a turn that did not end the episode returns besides its observation and reward. */
export interface TurnClose {
  done: false;
  truncated: boolean;
  info: Record<string, unknown>;
}

/**
 * Closes a turn that did not end the episode: after the `maxTurns`-th turn the episode is cut —
 * it ends, `truncated` is true and `info` gets `success: false` and `truncatedInfo`.
 */
export function closeTurn(
  episode: CountedEpisode,
  maxTurns: number,
  info: Record<string, unknown>,
  truncatedInfo: Record<string, unknown> = {},
): TurnClose {
  const truncated = !episode.ended && episode.turnsUsed >= maxTurns;
  if (truncated) episode.ended = true;
  return { done: false, truncated, info: truncated ? { ...info, success: false, ...truncatedInfo } : info };
}
