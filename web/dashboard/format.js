// Number formatting for tables, axes and tooltips.

export function formatValue(value) {
  if (value === null || value === undefined || !Number.isFinite(value))
    return value === null || value === undefined ? '—' : String(value);
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e5)) return value.toExponential(2);
  if (Number.isInteger(value)) return String(value);
  return abs >= 100 ? value.toFixed(0) : abs >= 1 ? value.toFixed(2) : value.toFixed(3);
}

/** 75 → "1m15s", 3725 → "1h02m". */
export function formatDuration(seconds) {
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 10) return `${Number(seconds.toFixed(seconds < 1 ? 2 : 1))}s`;
  if (seconds < 60) return `${Math.round(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** 1234 → "1.2k", 5600000 → "5.6M". */
export function formatCount(value) {
  if (!Number.isFinite(value)) return '';
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${(value / 1e9).toFixed(1)}G`;
  if (abs >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (abs >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return String(Math.round(value));
}
