// The run list, updated in place on every refresh (rows are keyed by run id and only changed
// cells are rewritten), so a refresh never moves keyboard focus or resets a checkbox.
import { $, h, setText } from './dom.js';
import { formatValue } from './format.js';
import { runColor } from './palette.js';

export function renderRunTable(runs, selected, onToggle) {
  const body = $('run-table').querySelector('tbody');
  const rows = new Map([...body.children].map((row) => [Number(row.dataset.id), row]));
  runs.forEach((run, position) => {
    let row = rows.get(run.id);
    if (row === undefined) {
      const checkbox = h('input', {
        type: 'checkbox',
        'aria-label': `overlay ${run.name}`,
        onchange: (e) => onToggle(run.id, e.target.checked),
      });
      row = h(
        'tr',
        { dataset: { id: String(run.id), run: run.name } },
        h('td', {}, checkbox),
        h(
          'td',
          {},
          h('span', { class: 'swatch', style: `background:${runColor(run.id)}` }),
          h('a', { href: `/runs/${encodeURIComponent(run.name)}`, title: 'link to this run' }, run.name),
        ),
        ...['status', 'env', 'algo', 'steps', 'reward', 'success', 'created', 'git'].map((key) =>
          h('td', { class: ['steps', 'reward', 'success'].includes(key) ? 'num' : '', dataset: { cell: key } }),
        ),
      );
    }
    if (body.children[position] !== row) body.insertBefore(row, body.children[position] ?? null);
    row.querySelector('input').checked = selected.has(run.id);
    const cell = (key) => row.querySelector(`[data-cell="${key}"]`);
    setText(cell('status'), run.status);
    cell('status').title = run.statusReason ?? '';
    setText(cell('env'), run.config.env ?? '');
    setText(cell('algo'), run.config.algo ?? '');
    setText(cell('steps'), run.steps);
    setText(cell('reward'), run.last ? formatValue(run.last.reward) : '');
    setText(cell('success'), run.last ? formatValue(run.last.success) : '');
    setText(cell('created'), new Date(run.createdAt).toLocaleString());
    setText(cell('git'), (run.gitCommit ?? '').slice(0, 10));
    rows.delete(run.id);
  });
  for (const gone of rows.values()) gone.remove();
  $('no-runs').hidden = runs.length > 0;
}
