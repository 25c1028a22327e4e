// Run colours: the Okabe–Ito palette (distinguishable with the common colour-vision deficiencies;
// its yellow is left out, too faint on white). A run's colour comes from its id, never from its
// position in a list, so adding or hiding a run recolours nothing; runs past the 7th also get a
// dash pattern.
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
const DASHES = [null, [6, 3], [2, 2], [8, 3, 2, 3]];

export function runColor(runId) {
  return PALETTE[(runId - 1) % PALETTE.length];
}

export function runDash(runId) {
  return DASHES[Math.floor((runId - 1) / PALETTE.length) % DASHES.length];
}

/** '#0072B2' with alpha → 'rgba(0, 114, 178, alpha)'. */
export function withAlpha(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

// Token advantage colours, also colour-blind safe: blue for advantage > 0, vermillion for < 0.
export const POSITIVE = [0, 114, 178];
export const NEGATIVE = [213, 94, 0];
