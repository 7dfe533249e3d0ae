import { backoffMs } from './db.ts';

const probe_base_ms = 100;
// Probing at most once a second bounds the connection attempts of an outage, whatever its length.
const probe_cap_ms = 1_000;

/**
 * Whether the database is worth asking. Tripped by evidence that it cannot be reached (a failed
 * connect, a heartbeat that went unanswered); while tripped, queries fail at once instead of each
 * waiting for its own timeout, and a single timer probes until the database answers again.
 */
export class Availability {
  private up = true;
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  /**
   * `probe` must settle within about a second. `onTrip` cuts what is in flight, so requests
   * stuck on a partitioned connection answer now rather than at their own timeout.
   */
  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly onTrip: () => void,
  ) {}

  get available(): boolean {
    return this.up;
  }

  trip(): void {
    if (!this.up || this.closed) return;
    this.up = false;
    this.onTrip();
    this.schedule(probe_base_ms);
  }

  /** Something suggests the database is back (the listener reconnected): probe now. */
  nudge(): void {
    if (this.up || this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.schedule(0);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.attempt(), delayMs);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    try {
      await this.probe();
      this.timer = null;
      this.up = true;
      this.failures = 0;
    } catch {
      this.timer = null;
      this.failures++;
      this.schedule(backoffMs(this.failures, probe_base_ms, probe_cap_ms));
    }
  }
}
