// One trajectory at token level: a block per turn (plus the prompt), each token coloured by what
// the update did with it — masked (prompt, observation, tool output: not trained on) or trained
// with a positive (blue) or negative (vermillion) advantage, stronger for larger |advantage|.
import { h } from './dom.js';
import { formatValue } from './format.js';
import { NEGATIVE, POSITIVE } from './palette.js';

function tokenSpan(t, i, maxAbs) {
  const mask = t.lossMask[i];
  const advantage = t.advantages ? t.advantages[i] : null;
  let piece = t.pieces[i];
  const special = /^<\|[a-z_0-9]+\|>$/.test(piece);
  if (piece === '') piece = '\u00b7'; // a byte of a multi-byte character: its text is on the last byte
  const classes = ['tok', mask === 1 ? 'trained' : 'masked'];
  let style;
  if (mask === 1) {
    if (advantage === null || advantage === 0) classes.push('neutral');
    else {
      const alpha = (0.15 + 0.6 * Math.min(1, Math.abs(advantage) / maxAbs)).toFixed(3);
      const [r, g, b] = advantage > 0 ? POSITIVE : NEGATIVE;
      style = `background: rgba(${r}, ${g}, ${b}, ${alpha})`;
    }
  }
  if (special) classes.push('special');
  const title =
    `token ${i}: id ${t.tokens[i]} · mask ${mask}` +
    (mask === 1
      ? ` · logprob ${formatValue(t.logprobs[i])} · advantage ${advantage === null ? 'none' : formatValue(advantage)}`
      : '') +
    (t.rewards[i] ? ` · reward ${formatValue(t.rewards[i])}` : '');
  return h(
    'span',
    {
      class: classes.join(' '),
      style,
      title,
      dataset: { mask: String(mask), advantage: advantage === null ? '' : String(advantage) },
    },
    piece,
  );
}

/** The episode's named reward components and the ones that failed (with why), when it has any. */
function rewardBlock(t) {
  const components = Object.entries(t.rewardComponents ?? {});
  const failures = Object.entries(t.rewardFailures ?? {});
  if (components.length === 0 && failures.length === 0) return [];
  return [
    h(
      'div',
      { class: 'turn reward-components', dataset: { turn: 'rewards' } },
      h(
        'h4',
        {},
        failures.length > 0
          ? 'reward components · not scored: its group was left out of the update'
          : 'reward components',
      ),
      h(
        'table',
        {},
        h(
          'tbody',
          {},
          ...components.map(([name, value]) =>
            h('tr', { dataset: { component: name } }, h('td', {}, name), h('td', { class: 'num' }, formatValue(value))),
          ),
          ...failures.map(([name, reason]) =>
            h(
              'tr',
              { class: 'failure', dataset: { failure: name } },
              h('td', {}, name),
              h('td', {}, `failed: ${reason}`),
            ),
          ),
        ),
      ),
    ),
  ];
}

/** The turn blocks of trajectory `t` (its reward components first, when it has any). */
export function trajectoryBlocks(t) {
  const maxAbs = Math.max(1e-12, ...(t.advantages ?? []).map(Math.abs));
  const span = (from, to) => Array.from({ length: Math.max(0, to - from) }, (_, k) => tokenSpan(t, from + k, maxAbs));
  const firstStart = t.turns.length > 0 ? t.turns[0].start : t.tokens.length;
  const blocks = [
    ...rewardBlock(t),
    h(
      'div',
      { class: 'turn', dataset: { turn: 'prompt' } },
      h('h4', {}, 'prompt'),
      h('div', { class: 'tokens' }, span(0, firstStart)),
    ),
  ];
  t.turns.forEach((turn, k) => {
    const next = k + 1 < t.turns.length ? t.turns[k + 1].start : t.tokens.length;
    const header = `turn ${k + 1} · reward ${formatValue(turn.reward)}${turn.invalidAction ? ' · invalid action' : ''} · action ${JSON.stringify(turn.action)}`;
    blocks.push(
      h(
        'div',
        { class: 'turn', dataset: { turn: String(k + 1) } },
        h('h4', {}, header),
        h('div', { class: 'tokens' }, span(turn.start, next)),
      ),
    );
  });
  return blocks;
}

export function trajectorySummary(t) {
  const trained = t.lossMask.filter((m) => m === 1).length;
  return (
    `step ${t.step} #${t.index} · group ${t.groupId} · seed ${t.seed} · return ${formatValue(t.totalReward)} · ${t.success ? 'success' : 'no success'}${t.truncated ? ' · truncated' : ''} · ` +
    `${t.tokens.length} tokens, ${trained} trained on · ${t.advantages ? `advantages in [${formatValue(Math.min(...t.advantages))}, ${formatValue(Math.max(...t.advantages))}]` : 'not trained on (no advantages)'}`
  );
}
