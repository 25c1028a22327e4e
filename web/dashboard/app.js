// The dashboard page: wires the run list, the metric picker and charts, evaluations and
// checkpoints, the trajectory browser and the config diff to the JSON API (src/dashboard/api.ts).
// Every few seconds it asks for what is new (runs, and each selected run's steps after the last
// one it has) and updates the page in place; nothing is rebuilt, so focus and zoom stay put.
import { $, fillSelect, getJson, h } from './dom.js';
import { MetricCharts } from './metric-charts.js';
import { DEFAULT_METRICS, GROUPS, isRewardPanelMetric, METRICS, metricGroup, metricTitle } from './metric-catalog.js';
import { MetricData } from './metric-data.js';
import { runColor } from './palette.js';
import { renderConfigDiff } from './config-diff.js';
import { renderRunDetails } from './run-details.js';
import { renderRunTable } from './run-table.js';
import { TrajectoryBrowser } from './trajectories.js';
import { readUrlState, writeUrlState } from './url-state.js';

const linked = readUrlState(location);
const state = {
  runs: [],
  selected: new Set(),
  /** Metrics picked by the user; null = the defaults that the selected runs record. */
  metrics: linked.metrics.length > 0 ? linked.metrics : null,
  xAxis: linked.xAxis,
  smoothing: linked.smoothing,
  logScale: linked.logScale,
  trajectory: linked.trajectory,
  group: linked.group,
  refreshMs: linked.refreshMs,
  refreshes: 0,
};
const data = new MetricData();
const selectedRuns = () => state.runs.filter((run) => state.selected.has(run.id));
const charts = new MetricCharts({
  grid: $('chart-grid'),
  data,
  view: () => ({ runs: selectedRuns(), xAxis: state.xAxis, smoothing: state.smoothing, logScale: state.logScale }),
});
// The Rewards panel: every reward/* and monitor/* series, whatever the picker shows.
const rewardCharts = new MetricCharts({
  grid: $('reward-grid'),
  data,
  view: () => ({ runs: selectedRuns(), xAxis: state.xAxis, smoothing: state.smoothing, logScale: state.logScale }),
});
const trajectories = new TrajectoryBrowser({
  onShow: (link) => {
    state.trajectory = link.trajectory ?? null;
    state.group = link.group ?? null;
    saveUrl();
  },
});

function saveUrl() {
  writeUrlState({ ...state, runs: selectedRuns().map((run) => run.name), metrics: state.metrics ?? [] });
}

// ---- metrics: picker and charts ----------------------------------------------------------------

const catalogOrder = Object.keys(METRICS);
function byCatalog(a, b) {
  const group = GROUPS.indexOf(metricGroup(a)) - GROUPS.indexOf(metricGroup(b));
  if (group !== 0) return group;
  const [i, j] = [catalogOrder.indexOf(a), catalogOrder.indexOf(b)];
  return i >= 0 && j >= 0 ? i - j : i >= 0 ? -1 : j >= 0 ? 1 : a.localeCompare(b);
}

function availableMetrics() {
  return data.keys([...state.selected]).sort(byCatalog);
}

function shownMetrics() {
  const available = availableMetrics();
  const chosen = state.metrics ?? DEFAULT_METRICS;
  return available.filter((key) => chosen.includes(key));
}

function updateCharts(changedRuns = []) {
  charts.update(shownMetrics(), changedRuns);
  const rewardMetrics = availableMetrics().filter(isRewardPanelMetric);
  rewardCharts.update(rewardMetrics, changedRuns);
  $('no-rewards').hidden = rewardMetrics.length > 0;
}

function renderPicker() {
  const available = availableMetrics();
  const shown = new Set(shownMetrics());
  const groups = $('metric-groups');
  if (groups.dataset.keys !== available.join(',')) {
    groups.dataset.keys = available.join(',');
    groups.replaceChildren(
      ...GROUPS.filter((group) => available.some((key) => metricGroup(key) === group)).map((group) => {
        const keys = available.filter((key) => metricGroup(key) === group);
        return h(
          'fieldset',
          { dataset: { group } },
          h('legend', {}, group),
          ...keys.map((key) =>
            h(
              'label',
              { dataset: { metric: key }, title: metricTitle(key) },
              h('input', { type: 'checkbox', value: key, onchange: pickMetric }),
              ` ${key}`,
            ),
          ),
        );
      }),
    );
    filterPicker();
  }
  for (const box of groups.querySelectorAll('input')) box.checked = shown.has(box.value);
  $('metric-count').textContent = `(${shown.size} of ${available.length})`;
}

function pickMetric() {
  state.metrics = [...$('metric-groups').querySelectorAll('input:checked')].map((box) => box.value);
  renderPicker();
  updateCharts();
  saveUrl();
}

function filterPicker() {
  const text = $('metric-filter').value.trim().toLowerCase();
  for (const label of $('metric-groups').querySelectorAll('label'))
    label.hidden = text !== '' && !`${label.dataset.metric} ${label.title}`.toLowerCase().includes(text);
}

function renderLegend() {
  const runs = selectedRuns();
  const text = runs.map((run) => run.id).join(',');
  if ($('legend').dataset.runs === text) return;
  $('legend').dataset.runs = text;
  $('legend').replaceChildren(
    ...runs.map((run) =>
      h(
        'span',
        { dataset: { run: run.name } },
        h('span', { class: 'swatch', style: `background:${runColor(run.id)}` }),
        run.name,
      ),
    ),
  );
}

async function toggleRun(id, on) {
  if (on) state.selected.add(id);
  else {
    state.selected.delete(id);
    data.forget(id);
  }
  await data.refresh([...state.selected]);
  renderLegend();
  renderPicker();
  updateCharts();
  await renderRunDetails(selectedRuns());
  saveUrl();
}

function setChartOption(change) {
  Object.assign(state, change);
  $('smoothing-value').textContent = state.smoothing.toFixed(2);
  updateCharts();
  saveUrl();
}

// ---- refresh -----------------------------------------------------------------------------------

function resolveRun(reference) {
  return state.runs.find((run) => run.name === reference || String(run.id) === reference);
}

async function loadRuns() {
  state.runs = await getJson('/api/runs');
  for (const id of state.selected) if (!state.runs.some((r) => r.id === id)) state.selected.delete(id);
  renderRunTable(state.runs, state.selected, toggleRun);
  const byName = state.runs.map((run) => [run.name, run.name]);
  const byId = state.runs.map((run) => [String(run.id), run.name]);
  fillSelect($('trajectory-run'), byName);
  fillSelect($('config-a'), byId);
  fillSelect($('config-b'), byId);
}

async function refresh() {
  await loadRuns();
  const changed = await data.refresh([...state.selected]);
  renderLegend();
  renderPicker();
  updateCharts(changed);
  await renderRunDetails(selectedRuns());
  renderConfigDiff(state.runs);
  state.refreshes++;
  document.body.dataset.refreshes = String(state.refreshes);
  $('status').textContent =
    `${state.runs.length} run${state.runs.length === 1 ? '' : 's'} · updated ${new Date().toLocaleTimeString()}`;
}

async function start() {
  await loadRuns();
  const wanted = linked.runs.map(resolveRun).filter(Boolean);
  for (const run of wanted.length > 0 ? wanted : state.runs.slice(0, 4)) state.selected.add(run.id);
  if (wanted.length === 1) $('trajectory-run').value = wanted[0].name;
  if (state.runs.length > 1) $('config-b').value = String(state.runs[1].id);
  $('x-axis').value = state.xAxis;
  $('smoothing').value = String(state.smoothing);
  $('smoothing-value').textContent = state.smoothing.toFixed(2);
  $('log-scale').checked = state.logScale;
  await refresh();
  const opened = await trajectories.open({ trajectory: state.trajectory, group: state.group }).catch(() => false);
  if (!opened) await trajectories.loadList(0, { showFirst: true });
  saveUrl();
  document.body.dataset.ready = 'true';
}

$('x-axis').addEventListener('change', (e) => setChartOption({ xAxis: e.target.value }));
$('smoothing').addEventListener('input', (e) => setChartOption({ smoothing: Number(e.target.value) }));
$('log-scale').addEventListener('change', (e) => setChartOption({ logScale: e.target.checked }));
$('metric-filter').addEventListener('input', filterPicker);
for (const id of ['config-a', 'config-b', 'config-only-diff'])
  $(id).addEventListener('change', () => renderConfigDiff(state.runs));

// For tests and debugging: what each chart plots.
window.agentrlDashboard = {
  plotted: (metric) => charts.plotted(metric) ?? rewardCharts.plotted(metric),
  geometry: (metric, x, y) => charts.geometry(metric, x, y) ?? rewardCharts.geometry(metric, x, y),
  state,
};

const showError = (error) => ($('status').textContent = `error: ${error.message}`);
let refreshing = false;
start()
  .catch(showError)
  .finally(() =>
    setInterval(() => {
      if (refreshing || document.visibilityState !== 'visible') return;
      refreshing = true;
      refresh()
        .catch(showError)
        .finally(() => (refreshing = false));
    }, state.refreshMs),
  );
