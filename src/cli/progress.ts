/**
 * A progress line for long work. On a terminal it redraws one line (bar, count, rate, ETA and
 * the caller's fields); elsewhere (CI, pipes) it prints a plain line at most every few seconds.
 */
export interface ProgressOptions {
  label: string;
  total: number;
  stream?: NodeJS.WriteStream;
  /** Minimum milliseconds between non-TTY lines. */
  plainIntervalMs?: number;
}

export class Progress {
  private readonly started = performance.now();
  private lastPlain = 0;
  private current = 0;
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;

  constructor(private readonly options: ProgressOptions) {
    this.stream = options.stream ?? process.stderr;
    this.tty = this.stream.isTTY === true;
  }

  private fields: Record<string, string | number> = {};

  update(current: number, fields: Record<string, string | number> = {}, force = false): void {
    this.current = current;
    this.fields = fields;
    const now = performance.now();
    if (!this.tty && !force && now - this.lastPlain < (this.options.plainIntervalMs ?? 5000)) return;
    this.lastPlain = now;
    const line = this.render(now, fields);
    if (this.tty) this.stream.write(`\r\x1b[2K${line}`);
    else this.stream.write(`${line}\n`);
  }

  currentValue(): number {
    return this.current;
  }

  done(fields?: Record<string, string | number>): void {
    this.update(this.current, fields ?? this.fields, true);
    if (this.tty) this.stream.write('\n');
  }

  private render(now: number, fields: Record<string, string | number>): string {
    const { total, label } = this.options;
    const fraction = total > 0 ? Math.min(1, this.current / total) : 1;
    const width = 20;
    const filled = Math.round(fraction * width);
    const elapsed = (now - this.started) / 1000;
    const eta = fraction > 0 ? (elapsed * (1 - fraction)) / fraction : 0;
    const extra = Object.entries(fields)
      .map(([k, v]) => `${k} ${typeof v === 'number' ? formatNumber(v) : v}`)
      .join('  ');
    return `${label} [${'█'.repeat(filled)}${'·'.repeat(width - filled)}] ${this.current}/${total}  ${formatSeconds(elapsed)} (eta ${formatSeconds(eta)})  ${extra}`;
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
