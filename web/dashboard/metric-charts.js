// The metric charts, on uPlot (canvas: a 3,000-step run is one path, not 3,000 elements). One chart
// per picked metric, every selected run overlaid in its own colour: the smoothed line solid, the
// raw values faint behind it. Drag to zoom (all charts follow), double-click to reset; the tooltip
// lists every run's value at the step under the cursor. Live updates call setData on the charts
// whose runs got new points; a chart is only rebuilt when its runs, axis, smoothing or scale change.
import uPlot from '/vendor/uPlot.esm.js';
import { h } from './dom.js';
import { formatCount, formatDuration, formatValue } from './format.js';
import { metricTitle } from './metric-catalog.js';
import { runColor, runDash, withAlpha } from './palette.js';
import { smooth } from './smoothing.js';

const HEIGHT = 220;
const X_LABELS = { step: 'step', seconds: 'wall time', tokens: 'generated tokens' };
const X_COLUMNS = { step: 'steps', seconds: 'seconds', tokens: 'tokens' };

export class MetricCharts {
  /** options: { grid: element, data: MetricData, view: () => ({ runs, xAxis, smoothing, logScale }) } */
  constructor({ grid, data, view }) {
    this.grid = grid;
    this.data = data;
    this.view = view;
    this.charts = new Map(); // metric → { figure, plot, uplot, series, layout }
    this.syncingZoom = false;
    this.zoomed = false;
    new ResizeObserver(() => this.resize()).observe(grid);
  }

  /** Shows exactly `metrics` (in this order), rebuilding only what changed; `changedRuns` got new points. */
  update(metrics, changedRuns = []) {
    const view = this.view();
    const layout = JSON.stringify([view.runs.map((r) => r.id), view.xAxis, view.smoothing, view.logScale]);
    for (const [metric, chart] of this.charts) {
      if (!metrics.includes(metric)) {
        chart.uplot?.destroy();
        chart.figure.remove();
        this.charts.delete(metric);
      }
    }
    metrics.forEach((metric, position) => {
      let chart = this.charts.get(metric);
      if (chart === undefined) {
        chart = this.createFigure(metric);
        this.charts.set(metric, chart);
      }
      if (this.grid.children[position] !== chart.figure)
        this.grid.insertBefore(chart.figure, this.grid.children[position] ?? null);
      if (chart.layout !== layout) this.draw(chart, metric, view, layout);
      else if (view.runs.some((r) => changedRuns.includes(r.id))) this.refreshData(chart, metric, view);
    });
  }

  createFigure(metric) {
    const plot = h('div', { class: 'plot' });
    const tooltip = h('div', { class: 'tooltip', hidden: true, role: 'status' });
    const figure = h(
      'figure',
      { class: 'chart', dataset: { metric } },
      h(
        'h3',
        {},
        h('span', { class: 'metric-title', title: metricTitle(metric) }, metricTitle(metric)),
        h('span', { class: 'metric-key' }, metric),
      ),
      plot,
      tooltip,
    );
    const chart = { figure, plot, tooltip, uplot: undefined, series: [], layout: undefined, hovered: false };
    // The cursor is synced across charts; the tooltip shows on the chart under the pointer only.
    plot.addEventListener('mouseenter', () => (chart.hovered = true));
    plot.addEventListener('mouseleave', () => {
      chart.hovered = false;
      tooltip.hidden = true;
    });
    return chart;
  }

  /** Per run: x, raw y and smoothed y for this metric, x strictly increasing. */
  seriesOf(metric, view) {
    return view.runs.map((run) => {
      const columns = this.data.columns(run.id);
      const xs = [];
      const raw = [];
      const steps = [];
      if (columns !== undefined) {
        const xColumn = columns[X_COLUMNS[view.xAxis]];
        const values = columns.values[metric] ?? [];
        for (let i = 0; i < columns.steps.length; i++) {
          const x = xColumn[i];
          if (x === null || x === undefined || (xs.length > 0 && x <= xs[xs.length - 1])) continue;
          let y = values[i] ?? null;
          if (y !== null && view.logScale && y <= 0) y = null;
          xs.push(x);
          raw.push(y);
          steps.push(columns.steps[i]);
        }
      }
      return { run, xs, raw, smoothed: smooth(raw, view.smoothing), steps };
    });
  }

  alignedData(series) {
    const tables = series.map((s) => [s.xs, s.raw, s.smoothed]);
    if (tables.every((t) => t[0].length === 0)) return [[]].concat(series.flatMap(() => [[], []]));
    return uPlot.join(tables);
  }

  draw(chart, metric, view, layout) {
    chart.uplot?.destroy();
    chart.layout = layout;
    chart.series = this.seriesOf(metric, view);
    chart.figure.classList.toggle(
      'empty',
      chart.series.every((s) => s.raw.every((v) => v === null)),
    );
    const smoothing = view.smoothing > 0;
    const uplotSeries = [{ label: X_LABELS[view.xAxis] }];
    for (const { run } of chart.series) {
      const color = runColor(run.id);
      const dash = runDash(run.id) ?? undefined;
      uplotSeries.push({
        label: `${run.name} (raw)`,
        stroke: smoothing ? withAlpha(color, 0.22) : color,
        width: smoothing ? 1 : 1.6,
        dash,
        spanGaps: true,
        points: { show: false },
      });
      uplotSeries.push({
        label: run.name,
        stroke: color,
        width: 2,
        dash,
        spanGaps: true,
        show: smoothing,
        points: { show: false },
      });
    }
    const formatX =
      view.xAxis === 'seconds' ? formatDuration : view.xAxis === 'tokens' ? formatCount : (v) => String(Math.round(v));
    const options = {
      width: Math.max(240, chart.figure.clientWidth - 12),
      height: HEIGHT,
      legend: { show: false },
      scales: { x: { time: false }, y: view.logScale ? { distr: 3 } : {} },
      series: uplotSeries,
      axes: [
        {
          values: (_plot, splits) => splits.map(formatX),
          label: X_LABELS[view.xAxis],
          labelSize: 18,
          size: 36,
          font: '11px system-ui',
          labelFont: '11px system-ui',
        },
        { values: (_plot, splits) => splits.map(formatValue), size: 56, font: '11px system-ui' },
      ],
      cursor: { sync: { key: 'agentrl-metrics' }, drag: { x: true, y: false }, points: { show: false } },
      hooks: {
        setCursor: [(u) => this.showTooltip(chart, u, formatX)],
        setScale: [(u, key) => key === 'x' && this.followZoom(u)],
      },
    };
    chart.uplot = new uPlot(options, this.alignedData(chart.series), chart.plot);
    if (this.zoomed && this.zoomRange) chart.uplot.setScale('x', this.zoomRange);
  }

  refreshData(chart, metric, view) {
    chart.series = this.seriesOf(metric, view);
    chart.figure.classList.toggle(
      'empty',
      chart.series.every((s) => s.raw.every((v) => v === null)),
    );
    chart.uplot.setData(this.alignedData(chart.series), !this.zoomed);
  }

  /** A drag-zoom (or its reset) on one chart applies to all. */
  followZoom(source) {
    if (this.syncingZoom) return;
    const { min, max } = source.scales.x;
    const xs = source.data[0];
    this.zoomed = xs.length > 0 && (min > xs[0] || max < xs[xs.length - 1]);
    this.zoomRange = { min, max };
    this.syncingZoom = true;
    try {
      for (const chart of this.charts.values())
        if (chart.uplot && chart.uplot !== source) chart.uplot.setScale('x', { min, max });
    } finally {
      this.syncingZoom = false;
    }
  }

  showTooltip(chart, u, formatX) {
    const { left, top } = u.cursor;
    if (!chart.hovered || left === undefined || left < 0 || u.data[0].length === 0) {
      chart.tooltip.hidden = true;
      return;
    }
    const x = u.posToVal(left, 'x');
    const rows = chart.series.map((s) => {
      const i = nearest(s.xs, x);
      const color = runColor(s.run.id);
      if (i < 0)
        return h(
          'tr',
          { dataset: { run: s.run.name } },
          h('td', {}, h('span', { class: 'swatch', style: `background:${color}` }), s.run.name),
          h('td', { colspan: 2, class: 'muted' }, 'no value'),
        );
      return h(
        'tr',
        { dataset: { run: s.run.name, step: String(s.steps[i]), value: s.raw[i] === null ? '' : String(s.raw[i]) } },
        h('td', {}, h('span', { class: 'swatch', style: `background:${color}` }), s.run.name),
        h('td', { class: 'num' }, `step ${s.steps[i]}`),
        h(
          'td',
          { class: 'num' },
          formatValue(s.smoothed[i]),
          s.smoothed[i] !== s.raw[i] ? h('span', { class: 'muted' }, ` (raw ${formatValue(s.raw[i])})`) : null,
        ),
      );
    });
    chart.tooltip.replaceChildren(
      h('div', { class: 'tooltip-x' }, `${X_LABELS[this.view().xAxis]} ${formatX(x)}`),
      h('table', {}, h('tbody', {}, rows)),
    );
    chart.tooltip.hidden = false;
    const plotLeft = u.over.offsetLeft;
    const flip = left > u.over.clientWidth / 2;
    chart.tooltip.style.left = `${plotLeft + left + (flip ? -12 : 12)}px`;
    chart.tooltip.style.transform = flip ? 'translateX(-100%)' : '';
    chart.tooltip.style.top = `${u.over.offsetTop + Math.max(0, top - 10)}px`;
  }

  resize() {
    for (const chart of this.charts.values())
      chart.uplot?.setSize({ width: Math.max(240, chart.figure.clientWidth - 12), height: HEIGHT });
  }

  /** For tests: the page coordinates of (x, y) on a chart, and its x range. */
  geometry(metric, x, y) {
    const u = this.charts.get(metric)?.uplot;
    if (u === undefined) return null;
    const box = u.over.getBoundingClientRect();
    return {
      left: box.left + u.valToPos(x, 'x'),
      top: box.top + (y === undefined ? box.height / 2 : u.valToPos(y, 'y')),
      xMin: u.scales.x.min,
      xMax: u.scales.x.max,
      yDistribution: u.scales.y.distr,
    };
  }

  /** For tests and debugging: what a chart plots, per run. */
  plotted(metric) {
    const chart = this.charts.get(metric);
    return (
      chart?.series.map((s) => ({ run: s.run.name, steps: s.steps, xs: s.xs, raw: s.raw, smoothed: s.smoothed })) ??
      null
    );
  }
}

/** The index of the value in sorted `xs` nearest to x, or -1 when empty. */
function nearest(xs, x) {
  if (xs.length === 0) return -1;
  let low = 0;
  let high = xs.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (xs[middle] < x) low = middle + 1;
    else high = middle;
  }
  return low > 0 && Math.abs(xs[low - 1] - x) <= Math.abs(xs[low] - x) ? low - 1 : low;
}
