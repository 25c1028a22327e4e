// The dashboard page: run list, overlaid metric charts, trajectory viewer, config diff.
// Plain DOM code over the JSON API of src/dashboard/server.ts; refreshes every 5 s.
import { formatValue, lineChart } from './charts.js';

const CHARTS = [
  { key: 'reward', title: 'reward (mean episode return)' },
  { key: 'success', title: 'success rate' },
  { key: 'validationSuccess', title: 'validation success' },
  { key: 'kl', title: 'KL to reference' },
  { key: 'entropy', title: 'entropy' },
  { key: 'loss', title: 'loss' },
  { key: 'rolloutTokensPerSecond', title: 'throughput: generated tokens/s' },
  { key: 'trainTokensPerSecond', title: 'throughput: trained tokens/s' },
];
const COLORS = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bc4c00', '#0a7f8c', '#bf3989', '#4d2d00'];

const state = { runs: [], selected: new Set(), metrics: new Map(), initialised: false };
const $ = (id) => document.getElementById(id);

async function getJson(path) {
  const response = await fetch(path);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `${path}: HTTP ${response.status}`);
  return body;
}

function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (value !== false && value !== undefined && value !== null) node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  return node;
}

function colorOf(run) {
  return COLORS[state.runs.findIndex((r) => r.id === run.id) % COLORS.length];
}

// ---- runs --------------------------------------------------------------------------------------

function renderRunTable() {
  const body = $('run-table').querySelector('tbody');
  body.replaceChildren(
    ...state.runs.map((run) =>
      h(
        'tr',
        { dataset: { run: run.name } },
        h('td', {}, h('input', { type: 'checkbox', checked: state.selected.has(run.id), 'aria-label': `overlay ${run.name}`, onchange: (e) => toggleRun(run.id, e.target.checked) })),
        h('td', {}, h('span', { class: 'swatch', style: `background:${colorOf(run)}` }), run.name),
        h('td', {}, run.status),
        h('td', {}, run.config.env ?? ''),
        h('td', {}, run.config.algo ?? ''),
        h('td', { class: 'num' }, run.steps),
        h('td', { class: 'num' }, run.last ? formatValue(run.last.reward) : ''),
        h('td', { class: 'num' }, run.last ? formatValue(run.last.success) : ''),
        h('td', {}, new Date(run.createdAt).toLocaleString()),
        h('td', { title: run.gitCommit ?? '' }, (run.gitCommit ?? '').slice(0, 10)),
      ),
    ),
  );
  $('no-runs').hidden = state.runs.length > 0;
}

async function toggleRun(id, on) {
  if (on) state.selected.add(id);
  else state.selected.delete(id);
  await loadMetrics();
  renderCharts();
}

// ---- charts ------------------------------------------------------------------------------------

async function loadMetrics() {
  await Promise.all([...state.selected].map(async (id) => state.metrics.set(id, await getJson(`/api/runs/${id}/metrics`))));
}

function renderCharts() {
  const runs = state.runs.filter((run) => state.selected.has(run.id));
  $('legend').replaceChildren(...runs.map((run) => h('span', {}, h('span', { class: 'swatch', style: `background:${colorOf(run)}` }), run.name)));
  $('chart-grid').replaceChildren(
    ...CHARTS.map(({ key, title }) => {
      const series = runs.map((run) => ({
        name: run.name,
        color: colorOf(run),
        points: (state.metrics.get(run.id) ?? []).filter((m) => key in m.values).map((m) => [m.step, m.values[key]]),
      }));
      return h('figure', { class: 'chart', dataset: { metric: key } }, h('h3', {}, title), lineChart({ series, label: title }));
    }),
  );
}

// ---- trajectories ------------------------------------------------------------------------------

function fillSelect(select, options, keep) {
  const previous = keep ? select.value : undefined;
  select.replaceChildren(...options.map(([value, text]) => h('option', { value }, text)));
  if (previous !== undefined && options.some(([value]) => value === previous)) select.value = previous;
}

async function loadTrajectoryList() {
  const run = $('trajectory-run').value;
  if (!run) return;
  const list = await getJson(`/api/runs/${encodeURIComponent(run)}/trajectories`);
  fillSelect(
    $('trajectory-pick'),
    list.map((t) => [`${t.step}/${t.index}`, `step ${t.step} #${t.index} · reward ${formatValue(t.totalReward)}${t.success ? ' · success' : ''} · ${t.tokens} tokens`]),
    true,
  );
  if (list.length === 0) {
    $('trajectory-summary').textContent = 'This run has no recorded trajectories.';
    $('trajectory-view').replaceChildren();
  } else await showTrajectory();
}

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
      style = advantage > 0 ? `background: rgba(22, 163, 74, ${alpha})` : `background: rgba(220, 38, 38, ${alpha})`;
    }
  }
  if (special) classes.push('special');
  const title = `token ${i}: id ${t.tokens[i]} · mask ${mask}` + (mask === 1 ? ` · logprob ${formatValue(t.logprobs[i])} · advantage ${advantage === null ? 'none' : formatValue(advantage)}` : '') + (t.rewards[i] ? ` · reward ${formatValue(t.rewards[i])}` : '');
  return h('span', { class: classes.join(' '), style, title, dataset: { mask: String(mask), advantage: advantage === null ? '' : String(advantage) } }, piece);
}

async function showTrajectory() {
  const run = $('trajectory-run').value;
  const pick = $('trajectory-pick').value;
  if (!run || !pick) return;
  const [step, index] = pick.split('/');
  const t = await getJson(`/api/runs/${encodeURIComponent(run)}/trajectories/${step}/${index}`);
  const maxAbs = Math.max(1e-12, ...(t.advantages ?? []).map(Math.abs));
  const span = (from, to) => Array.from({ length: Math.max(0, to - from) }, (_, k) => tokenSpan(t, from + k, maxAbs));
  const blocks = [];
  const firstStart = t.turns.length > 0 ? t.turns[0].start : t.tokens.length;
  blocks.push(h('div', { class: 'turn', dataset: { turn: 'prompt' } }, h('h4', {}, 'prompt'), h('div', { class: 'tokens' }, span(0, firstStart))));
  t.turns.forEach((turn, k) => {
    const next = k + 1 < t.turns.length ? t.turns[k + 1].start : t.tokens.length;
    const header = `turn ${k + 1} · reward ${formatValue(turn.reward)}${turn.invalidAction ? ' · invalid action' : ''} · action ${JSON.stringify(turn.action)}`;
    blocks.push(h('div', { class: 'turn', dataset: { turn: String(k + 1) } }, h('h4', {}, header), h('div', { class: 'tokens' }, span(turn.start, next))));
  });
  $('trajectory-view').replaceChildren(...blocks);
  const trained = t.lossMask.filter((m) => m === 1).length;
  $('trajectory-summary').textContent =
    `group ${t.groupId} · seed ${t.seed} · return ${formatValue(t.totalReward)} · ${t.success ? 'success' : 'no success'}${t.truncated ? ' · truncated' : ''} · ` +
    `${t.tokens.length} tokens, ${trained} trained on · ${t.advantages ? `advantages in [${formatValue(Math.min(...t.advantages))}, ${formatValue(Math.max(...t.advantages))}]` : 'not trained on (no advantages)'}`;
}

// ---- config diff -------------------------------------------------------------------------------

function renderConfigDiff() {
  const a = state.runs.find((r) => String(r.id) === $('config-a').value);
  const b = state.runs.find((r) => String(r.id) === $('config-b').value);
  if (!a || !b) return;
  const meta = (run) => ({ '(status)': run.status, '(seed)': run.seed, '(git commit)': run.gitCommit, '(created)': run.createdAt, ...run.config });
  const left = meta(a);
  const right = meta(b);
  const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort((x, y) => (x.startsWith('(') === y.startsWith('(') ? x.localeCompare(y) : x.startsWith('(') ? -1 : 1));
  const onlyDiff = $('config-only-diff').checked;
  const show = (v) => (v === undefined ? '—' : JSON.stringify(v));
  const table = $('config-table');
  table.querySelector('thead').replaceChildren(h('tr', {}, h('th', {}, 'key'), h('th', {}, a.name), h('th', {}, b.name)));
  table.querySelector('tbody').replaceChildren(
    ...keys
      .map((key) => ({ key, differs: show(left[key]) !== show(right[key]) }))
      .filter(({ differs }) => differs || !onlyDiff)
      .map(({ key, differs }) => h('tr', { class: differs ? 'differs' : '', dataset: { key } }, h('td', {}, key), h('td', {}, show(left[key])), h('td', {}, show(right[key])))),
  );
}

// ---- refresh -----------------------------------------------------------------------------------

async function refresh() {
  state.runs = await getJson('/api/runs');
  if (!state.initialised) {
    state.runs.slice(0, 4).forEach((run) => state.selected.add(run.id));
    state.initialised = true;
  }
  for (const id of state.selected) if (!state.runs.some((r) => r.id === id)) state.selected.delete(id);
  renderRunTable();
  await loadMetrics();
  renderCharts();
  const runOptions = state.runs.map((run) => [String(run.id), run.name]);
  const firstTime = $('trajectory-run').options.length === 0;
  fillSelect($('trajectory-run'), runOptions, true);
  fillSelect($('config-a'), runOptions, true);
  fillSelect($('config-b'), runOptions, true);
  if (firstTime && state.runs.length > 1) $('config-b').value = String(state.runs[1].id);
  renderConfigDiff();
  if (firstTime) await loadTrajectoryList();
  $('status').textContent = `${state.runs.length} run${state.runs.length === 1 ? '' : 's'} · updated ${new Date().toLocaleTimeString()}`;
  document.body.dataset.ready = 'true';
}

$('trajectory-run').addEventListener('change', loadTrajectoryList);
$('trajectory-pick').addEventListener('change', showTrajectory);
for (const id of ['config-a', 'config-b', 'config-only-diff']) $(id).addEventListener('change', renderConfigDiff);
refresh().catch((error) => ($('status').textContent = `error: ${error.message}`));
setInterval(() => {
  if (document.visibilityState === 'visible') refresh().catch((error) => ($('status').textContent = `error: ${error.message}`));
}, 5000);
