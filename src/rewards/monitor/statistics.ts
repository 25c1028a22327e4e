/** The few statistics the monitor's signals use: mean, Pearson correlation, least-squares slope. */

export function mean(values: readonly number[]): number {
  return values.length === 0 ? NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/**
 * Pearson's r = cov(x, y) / (σ_x σ_y); NaN when either side does not vary (or fewer than 2 pairs).
 */
export function pearson(xs: readonly number[], ys: readonly number[]): number {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return NaN;
  const mx = mean(xs.slice(0, n));
  const my = mean(ys.slice(0, n));
  let cov = 0;
  let vx = 0;
  let vy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] ?? mx) - mx;
    const dy = (ys[i] ?? my) - my;
    cov += dx * dy;
    vx += dx * dx;
    vy += dy * dy;
  }
  return vx === 0 || vy === 0 ? NaN : cov / Math.sqrt(vx * vy);
}

/** Least-squares slope of y over x, Σ(x−x̄)(y−ȳ) / Σ(x−x̄)²; NaN when x does not vary. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = Math.min(xs.length, ys.length);
  const mx = mean(xs.slice(0, n));
  const my = mean(ys.slice(0, n));
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] ?? mx) - mx;
    num += dx * ((ys[i] ?? my) - my);
    den += dx * dx;
  }
  return den === 0 ? NaN : num / den;
}

/** `0.1234` → `12.3%`. */
export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}
