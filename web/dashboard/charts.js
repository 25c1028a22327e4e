// Hand-written SVG line charts: several series (runs) over one x axis (steps), no dependencies.
const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 420;
const HEIGHT = 210;
const MARGIN = { left: 52, right: 12, top: 10, bottom: 26 };

function el(name, attributes = {}, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (parent) parent.appendChild(node);
  return node;
}

/** About `count` round tick values covering [min, max]. */
export function niceTicks(min, max, count = 5) {
  if (min === max) return [min];
  const raw = (max - min) / count;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => raw <= s) ?? 10 * power;
  const ticks = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

export function formatValue(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e5)) return value.toExponential(2);
  if (Number.isInteger(value)) return String(value);
  return abs >= 100 ? value.toFixed(0) : abs >= 1 ? value.toFixed(2) : value.toFixed(3);
}

/**
 * series: [{ name, color, points: [[step, value | null], …] }] → an <svg>. Every recorded point
 * is a <circle class="point" data-run data-step data-value> (with a tooltip); null values break
 * the line.
 */
export function lineChart({ series, label }) {
  const svg = el('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': label });
  const finite = series.flatMap((s) => s.points.filter(([, y]) => y !== null && Number.isFinite(y)));
  if (finite.length === 0) {
    el('text', { x: WIDTH / 2, y: HEIGHT / 2, 'text-anchor': 'middle', class: 'empty' }, svg).textContent = 'no data';
    return svg;
  }
  let [xMin, xMax] = [Math.min(...finite.map((p) => p[0])), Math.max(...finite.map((p) => p[0]))];
  let [yMin, yMax] = [Math.min(...finite.map((p) => p[1])), Math.max(...finite.map((p) => p[1]))];
  if (xMin === xMax) [xMin, xMax] = [xMin - 1, xMax + 1];
  if (yMin === yMax) {
    const pad = Math.abs(yMin) * 0.1 || 1;
    [yMin, yMax] = [yMin - pad, yMax + pad];
  } else {
    const pad = (yMax - yMin) * 0.06;
    [yMin, yMax] = [yMin - pad, yMax + pad];
  }
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (v) => MARGIN.left + ((v - xMin) / (xMax - xMin)) * plotW;
  const y = (v) => MARGIN.top + (1 - (v - yMin) / (yMax - yMin)) * plotH;

  for (const tick of niceTicks(yMin, yMax, 4)) {
    el('line', { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(tick), y2: y(tick), class: 'axis', 'stroke-dasharray': '2 3' }, svg);
    el('text', { x: MARGIN.left - 6, y: y(tick) + 3, 'text-anchor': 'end', class: 'tick-label' }, svg).textContent = formatValue(tick);
  }
  for (const tick of niceTicks(xMin, xMax, 6).filter((t) => Number.isInteger(t))) {
    el('line', { x1: x(tick), x2: x(tick), y1: HEIGHT - MARGIN.bottom, y2: HEIGHT - MARGIN.bottom + 4, class: 'axis' }, svg);
    el('text', { x: x(tick), y: HEIGHT - MARGIN.bottom + 15, 'text-anchor': 'middle', class: 'tick-label' }, svg).textContent = String(tick);
  }
  el('line', { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: HEIGHT - MARGIN.bottom, y2: HEIGHT - MARGIN.bottom, class: 'axis' }, svg);
  el('text', { x: WIDTH - MARGIN.right, y: HEIGHT - 2, 'text-anchor': 'end', class: 'tick-label' }, svg).textContent = 'step';

  for (const s of series) {
    const group = el('g', { class: 'series', 'data-run': s.name }, svg);
    // One polyline per unbroken stretch of finite values.
    let stretch = [];
    const flush = () => {
      if (stretch.length > 1) el('polyline', { class: 'line', stroke: s.color, points: stretch.join(' ') }, group);
      stretch = [];
    };
    for (const [step, value] of s.points) {
      if (value === null || !Number.isFinite(value)) {
        flush();
        continue;
      }
      stretch.push(`${x(step).toFixed(1)},${y(value).toFixed(1)}`);
    }
    flush();
    for (const [step, value] of s.points) {
      if (value === null || !Number.isFinite(value)) continue;
      const dot = el('circle', { class: 'point', cx: x(step).toFixed(1), cy: y(value).toFixed(1), r: s.points.length > 60 ? 1.6 : 2.6, fill: s.color, 'data-run': s.name, 'data-step': step, 'data-value': value }, group);
      el('title', {}, dot).textContent = `${s.name} · step ${step}: ${formatValue(value)}`;
    }
  }
  return svg;
}
