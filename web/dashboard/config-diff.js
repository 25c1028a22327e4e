// Two runs' effective configs side by side, the keys that differ marked.
import { $, h } from './dom.js';

export function renderConfigDiff(runs) {
  const a = runs.find((r) => String(r.id) === $('config-a').value);
  const b = runs.find((r) => String(r.id) === $('config-b').value);
  if (!a || !b) return;
  const meta = (run) => ({
    '(status)': run.status,
    '(seed)': run.seed,
    '(git commit)': run.gitCommit,
    '(created)': run.createdAt,
    ...run.config,
  });
  const left = meta(a);
  const right = meta(b);
  const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort((x, y) =>
    x.startsWith('(') === y.startsWith('(') ? x.localeCompare(y) : x.startsWith('(') ? -1 : 1,
  );
  const onlyDiff = $('config-only-diff').checked;
  const show = (v) => (v === undefined ? '—' : JSON.stringify(v));
  const table = $('config-table');
  const rows = keys
    .map((key) => ({ key, differs: show(left[key]) !== show(right[key]) }))
    .filter(({ differs }) => differs || !onlyDiff)
    .map(({ key, differs }) =>
      h(
        'tr',
        { class: differs ? 'differs' : '', dataset: { key } },
        h('td', {}, key),
        h('td', {}, show(left[key])),
        h('td', {}, show(right[key])),
      ),
    );
  const signature = JSON.stringify([a.id, b.id, onlyDiff, left, right]);
  if (table.dataset.signature === signature) return;
  table.dataset.signature = signature;
  table
    .querySelector('thead')
    .replaceChildren(h('tr', {}, h('th', {}, 'key'), h('th', {}, a.name), h('th', {}, b.name)));
  table.querySelector('tbody').replaceChildren(...rows);
}
