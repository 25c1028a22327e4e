/**
 * An episode as the judge reads it: the task text and the turns as a JSON array of
 * `{"role": "agent" | "environment", "content": …}` — JSON so that whatever the policy wrote (a fake
 * `</trajectory>` tag, a forged "score": 1) stays inside a quoted string.
 *
 * Bounded, with markers the judge can see: a task, action or observation longer than
 * `maxCharsPerMessage` keeps its head and tail around `…[N characters cut]…`; an episode whose JSON
 * is longer than `maxCharsPerEpisode` keeps its first turn and as many of its last turns as fit,
 * with a `{"role": "note", "content": "[N turns cut]"}` entry where the middle was (the first and
 * last turns are always kept, so a two-turn episode of long messages may exceed the bound).
 */
import type { EpisodeContext } from '../episode-context.ts';

export interface TranscriptLimits {
  maxCharsPerMessage: number;
  maxCharsPerEpisode: number;
}

interface Entry {
  role: 'agent' | 'environment' | 'note';
  content: string;
}

/** `text` cut to about `max` characters: head and tail kept around a marker saying how much went. */
export function cutMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.length - max;
  const head = Math.ceil(max / 2);
  return `${text.slice(0, head)}…[${cut} characters cut]…${text.slice(head + cut)}`;
}

/** The task the agent was given, bounded. */
export function taskText(context: EpisodeContext, limits: TranscriptLimits): string {
  return cutMiddle(context.prompt, limits.maxCharsPerMessage);
}

/** The episode's turns as judge-readable JSON, bounded (see the file header). */
export function transcriptJson(context: EpisodeContext, limits: TranscriptLimits): string {
  const turns = context.trajectory.turns.map((turn): Entry[] => {
    const entries: Entry[] = [{ role: 'agent', content: cutMiddle(turn.action, limits.maxCharsPerMessage) }];
    if (turn.observation !== '')
      entries.push({ role: 'environment', content: cutMiddle(turn.observation, limits.maxCharsPerMessage) });
    return entries;
  });
  const whole = JSON.stringify(turns.flat());
  if (whole.length <= limits.maxCharsPerEpisode || turns.length <= 2) return whole;
  const sizes = turns.map((entries) => JSON.stringify(entries).length);
  const first = turns[0] ?? [];
  let budget = limits.maxCharsPerEpisode - (sizes[0] ?? 0) - 64; // 64: the note entry and the brackets
  let kept = 1; // turns kept from the end (the last one always)
  budget -= sizes.at(-1) ?? 0;
  while (kept < turns.length - 1 && (sizes.at(-(kept + 1)) ?? Infinity) <= budget) {
    budget -= sizes.at(-(kept + 1)) ?? 0;
    kept += 1;
  }
  const dropped = turns.length - 1 - kept;
  if (dropped === 0) return whole;
  const note: Entry = { role: 'note', content: `[${dropped} turn${dropped === 1 ? '' : 's'} cut]` };
  return JSON.stringify([...first, note, ...turns.slice(-kept).flat()]);
}
