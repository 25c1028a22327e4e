/**
 * Printing for bench:engine: markdown tables, the best figure of each system over its thread
 * settings, and the issue-28 targets with "met" / "not met".
 */
import type { Measurement } from './engine-spawn.ts';

/** A markdown table: header, alignment row (text left, numbers right), rows. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  // A column of numbers (every cell starts with a digit or '—') is right-aligned.
  const numeric = header.map((_, column) => rows.length > 0 && rows.every((row) => /^[\d—]/.test(row[column] ?? '')));
  const cell = (text: string, column: number) =>
    numeric[column] ? text.padStart(widths[column] ?? 0) : text.padEnd(widths[column] ?? 0);
  console.log('');
  console.log(`| ${header.map(cell).join(' | ')} |`);
  console.log(
    `|${widths.map((width, column) => (numeric[column] ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`,
  );
  for (const row of rows) console.log(`| ${row.map(cell).join(' | ')} |`);
}

export const fixed = (value: number | undefined, digits: number): string =>
  value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits);

export const megabytes = (value: number): string => Math.round(value).toLocaleString('en-US');

/** The best value of `figure` over `measurements` (max for rates, min for times); undefined when none has it. */
export function bestOf(
  measurements: readonly Measurement[],
  figure: string,
  better: 'higher' | 'lower',
): { value: number; measurement: Measurement } | undefined {
  let found: { value: number; measurement: Measurement } | undefined;
  for (const measurement of measurements) {
    const value = measurement.figures[figure];
    if (value === undefined || !Number.isFinite(value)) continue;
    if (found === undefined || (better === 'higher' ? value > found.value : value < found.value))
      found = { value, measurement };
  }
  return found;
}

export interface TargetCheck {
  /** What is compared, e.g. "generation batch 16: agentrl / llama.cpp tok/s". */
  label: string;
  /** The measured ratio (or value). */
  value: number | undefined;
  /** The target, e.g. "≥ 1". */
  target: string;
  met: boolean | undefined;
}

/** A ratio target: `ours / theirs` compared with `bound` ('≥' or '≤'). */
export function ratioTarget(
  label: string,
  ours: number | undefined,
  theirs: number | undefined,
  comparison: '≥' | '≤',
  bound: number,
): TargetCheck {
  const value = ours === undefined || theirs === undefined ? undefined : ours / theirs;
  const met = value === undefined ? undefined : comparison === '≥' ? value >= bound : value <= bound;
  return { label, value, target: `${comparison} ${bound}`, met };
}

/** The targets' lines: "label: 1.16 (target ≥ 1): met". */
export function printTargets(checks: readonly TargetCheck[]): void {
  if (checks.length === 0) return;
  console.log('\nTargets (issue 28):');
  for (const check of checks) {
    const verdict = check.met === undefined ? 'not measured' : check.met ? 'met' : 'not met';
    console.log(`- ${check.label}: ${fixed(check.value, 3)} (target ${check.target}): ${verdict}`);
  }
}
