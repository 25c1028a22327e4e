/**
 * A progress line for long work. On a terminal it redraws one line (bar, count, time, ETA, the
 * phase and the caller's fields), cut to the terminal's width so it never wraps (a wrapped line
 * cannot be redrawn in place and piles up); `iteration` writes a finished iteration's line into
 * the history, so the scrollback keeps one line per iteration under the live one. Elsewhere (CI,
 * pipes) it prints plain lines: each iteration's, and other updates at most every few seconds.
 */
export interface ProgressOptions {
  label: string;
  total: number;
  stream?: NodeJS.WriteStream;
  /** Minimum milliseconds between non-TTY lines (iterations are always printed). */
  plainIntervalMs?: number;
}

export type Fields = Record<string, string | number>;

export class Progress {
  private readonly started = performance.now();
  private lastPlain = 0;
  private current = 0;
  private fields: Fields = {};
  private currentPhase = '';
  /** The count of the last iteration line written into the history (-1: none). */
  private inHistory = -1;
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;

  constructor(private readonly options: ProgressOptions) {
    this.stream = options.stream ?? process.stderr;
    this.tty = this.stream.isTTY === true;
  }

  update(current: number, fields: Fields = {}, force = false): void {
    this.current = current;
    this.fields = fields;
    this.draw(force);
  }

  /** What the work is doing now (`rollout 3/8`, `update`, `validate`), shown until the next phase. */
  phase(name: string, detail?: string): void {
    this.currentPhase = detail === undefined ? name : `${name} ${detail}`;
    this.draw(false);
  }

  /** A finished iteration: its line stays in the history (the terminal's scrollback, or the log). */
  iteration(current: number, fields: Fields): void {
    this.current = current;
    this.fields = fields;
    this.currentPhase = '';
    const line = this.render(performance.now());
    this.lastPlain = performance.now();
    this.stream.write(this.tty ? `\r\x1b[2K${line}\n` : `${line}\n`);
    this.inHistory = current;
  }

  currentValue(): number {
    return this.current;
  }

  done(fields?: Fields): void {
    this.currentPhase = '';
    // The last iteration's line is already in the history: only clear the live line.
    if (this.inHistory === this.current && (fields === undefined || fields === this.fields)) {
      if (this.tty) this.stream.write('\r\x1b[2K');
      return;
    }
    this.update(this.current, fields ?? this.fields, true);
    if (this.tty) this.stream.write('\n');
  }

  private draw(force: boolean): void {
    const now = performance.now();
    if (!this.tty && !force && now - this.lastPlain < (this.options.plainIntervalMs ?? 5000)) return;
    this.lastPlain = now;
    const line = this.render(now);
    if (this.tty) this.stream.write(`\r\x1b[2K${line}`);
    else this.stream.write(`${line}\n`);
  }

  private render(now: number): string {
    const { total, label } = this.options;
    const width = this.tty ? Math.max(20, (this.stream.columns || 80) - 1) : Infinity;
    const fraction = total > 0 ? Math.min(1, this.current / total) : 1;
    const barWidth = width < 100 ? 10 : 20;
    const filled = Math.round(fraction * barWidth);
    const elapsed = (now - this.started) / 1000;
    const eta = fraction > 0 ? (elapsed * (1 - fraction)) / fraction : 0;
    const head = `${label} [${'█'.repeat(filled)}${'·'.repeat(barWidth - filled)}] ${this.current}/${total} ${formatSeconds(elapsed)} (eta ${formatSeconds(eta)})`;
    const parts = [
      head,
      ...(this.currentPhase ? [this.currentPhase] : []),
      ...Object.entries(this.fields).map(([k, v]) => `${k} ${typeof v === 'number' ? formatNumber(v) : v}`),
    ];
    // Whole fields that fit, in order; a head wider than the terminal is cut with an ellipsis.
    let line = '';
    for (const part of parts) {
      const next = line === '' ? part : `${line}  ${part}`;
      if ([...next].length > width) break;
      line = next;
    }
    if (line === '') line = `${[...head].slice(0, width - 1).join('')}…`;
    return line;
  }
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e6) return String(value);
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e5)) return value.toExponential(2);
  return abs >= 100 ? value.toFixed(0) : abs >= 1 ? value.toFixed(3) : value.toFixed(4);
}

export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  const m = Math.floor(seconds / 60);
  return `${m}m${String(Math.round(seconds - 60 * m)).padStart(2, '0')}s`;
}

/**
 * The field naming the reward-hacking monitor's signals that fired in an iteration (its
 * `monitor/<signal>/fired` scalars), shown as `⚠ monitor: entropy-collapse, answer-leakage`; none
 * when nothing fired.
 */
export function monitorField(scalars: Readonly<Record<string, number>> = {}): Fields {
  const fired = Object.entries(scalars)
    .filter(([key, value]) => value === 1 && key.startsWith('monitor/') && key.endsWith('/fired'))
    .map(([key]) => key.slice('monitor/'.length, -'/fired'.length));
  return fired.length === 0 ? {} : { '⚠ monitor:': fired.join(', ') };
}
