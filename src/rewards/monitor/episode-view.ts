/**
 * An episode prepared once for every signal: its final answer, the text it was shown before
 * answering (the prompt and the earlier observations, tool outputs apart), the tool outputs it saw,
 * its mean reply length and its reward.
 *
 * "Earlier" means before the final reply: the observation after the final reply (the env's verdict,
 * which may name the right answer) is not something the policy could have copied.
 */
import { answerOf, callsTool, normalizeText, ownTextOf, toolOutputsOf } from './answer-text.ts';
import type { MonitoredEpisode } from './monitor-types.ts';

export interface EpisodeView {
  readonly episode: MonitoredEpisode;
  readonly groupId: string;
  /** The final reply's answer, normalised ('' without turns). */
  readonly answer: string;
  /** The prompt and the observations before the final reply, without tool outputs, normalised, joined by newlines. */
  readonly shownText: string;
  /** Tool outputs seen before the final reply, normalised. */
  readonly toolOutputs: readonly string[];
  /** Mean characters per reply (0 without turns). */
  readonly replyChars: number;
  readonly reward: number;
  /** Rewarded: a total reward above 0. */
  readonly rewarded: boolean;
}

export function episodeView(episode: MonitoredEpisode): EpisodeView {
  const { turns } = episode;
  const earlier = turns.slice(0, -1);
  const shown: string[] = episode.prompt === undefined ? [] : [normalizeText(episode.prompt)];
  const toolOutputs: string[] = [];
  for (const turn of earlier) {
    const afterToolCall = callsTool(turn.action);
    shown.push(ownTextOf(turn.observation, afterToolCall));
    toolOutputs.push(...toolOutputsOf(turn.observation, afterToolCall));
  }
  const final = turns.at(-1);
  const replyChars = turns.length === 0 ? 0 : turns.reduce((sum, turn) => sum + turn.action.length, 0) / turns.length;
  return {
    episode,
    groupId: episode.groupId,
    answer: final === undefined ? '' : answerOf(final.action),
    shownText: shown.filter((text) => text !== '').join('\n'),
    toolOutputs,
    replyChars,
    reward: episode.totalReward,
    rewarded: episode.totalReward > 0,
  };
}
