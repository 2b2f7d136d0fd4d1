import type { Writable } from 'node:stream';

/**
 * A one-line progress bar on a terminal (stderr); silent when not a TTY so pipes and logs stay
 * clean. Redraws at most every 100 ms.
 */
export class ProgressBar {
  private last = 0;
  private readonly started = Date.now();
  private drawn = false;

  constructor(
    private readonly stream: Writable & { isTTY?: boolean; columns?: number },
    private readonly label: string,
    private total: number,
    private readonly unit: 'items' | 'bytes' = 'items',
  ) {}

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  setTotal(total: number): void {
    this.total = total;
  }

  update(done: number, detail = ''): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.last < 100 && done < this.total) return;
    this.last = now;
    const width = Math.max(10, Math.min(30, (this.stream.columns ?? 80) - 60));
    const ratio = this.total > 0 ? Math.min(1, done / this.total) : 0;
    const filled = Math.round(ratio * width);
    const secs = (now - this.started) / 1000;
    const amount = this.unit === 'bytes' ? `${(done / 1e6).toFixed(1)}/${(this.total / 1e6).toFixed(1)} MB` : `${done}/${this.total}`;
    const mbps = secs > 0 ? done / 1e6 / secs : 0;
    const rate = secs > 0 && this.unit === 'bytes' ? ` ${mbps.toFixed(mbps < 10 ? 1 : 0)} MB/s` : '';
    this.stream.write(`\r${this.label} [${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${Math.round(ratio * 100)}% ${amount}${rate} ${detail}\x1b[K`);
    this.drawn = true;
  }

  done(): void {
    if (this.enabled && this.drawn) this.stream.write('\r\x1b[K');
  }
}
