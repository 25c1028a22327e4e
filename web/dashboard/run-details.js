// Held-out evaluations and checkpoints of the selected runs (GET /api/runs/:run), as tables;
// rewritten only when what the server returns changed.
import { $, getJson, h } from './dom.js';
import { formatValue } from './format.js';
import { runColor } from './palette.js';

let shown = '';

export async function renderRunDetails(runs) {
  const details = await Promise.all(runs.map(async (run) => ({ run, ...(await getJson(`/api/runs/${run.id}`)) })));
  const text = JSON.stringify(details.map((d) => [d.run.id, d.evaluations, d.checkpoints]));
  if (text === shown) return;
  shown = text;
  const name = (run) => h('td', {}, h('span', { class: 'swatch', style: `background:${runColor(run.id)}` }), run.name);
  const evaluations = details.flatMap((d) => d.evaluations.map((e) => ({ run: d.run, ...e })));
  $('evaluation-table')
    .querySelector('tbody')
    .replaceChildren(
      ...evaluations.map((e) =>
        h(
          'tr',
          { dataset: { run: e.run.name, step: String(e.step), split: e.split } },
          name(e.run),
          h('td', { class: 'num' }, e.step),
          h('td', {}, e.split),
          h('td', { class: 'num' }, e.episodes),
          h('td', { class: 'num' }, `${formatValue(e.success * 100)}%`),
          h('td', {}, new Date(e.time).toLocaleString()),
        ),
      ),
    );
  $('no-evaluations').hidden = evaluations.length > 0;
  const checkpoints = details.flatMap((d) => d.checkpoints.map((c) => ({ run: d.run, ...c })));
  $('checkpoint-table')
    .querySelector('tbody')
    .replaceChildren(
      ...checkpoints.map((c) =>
        h(
          'tr',
          { dataset: { run: c.run.name, step: String(c.step), kind: c.kind } },
          name(c.run),
          h('td', { class: 'num' }, c.step),
          h('td', {}, c.kind),
          h('td', { class: 'path' }, c.path ?? '—'),
          h('td', {}, c.hasState ? 'yes' : 'no'),
          h('td', {}, new Date(c.time).toLocaleString()),
        ),
      ),
    );
  $('no-checkpoints').hidden = checkpoints.length > 0;
}
