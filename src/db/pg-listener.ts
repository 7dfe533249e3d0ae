import type pg from 'pg';
import type { Availability } from './availability.ts';
import { backoffMs, type ListenHandlers, quoteIdent } from './db.ts';

const reconnect_base_ms = 100;
const reconnect_cap_ms = 2_000;
const heartbeat_interval_ms = 500;
// A partitioned network shows no error, only silence: an unanswered heartbeat is how it is seen.
export const heartbeat_timeout_ms = 1_000;

/**
 * LISTEN on a channel, answered within the heartbeat's bound: a connection that went silent after its
 * connect (no heartbeat runs on it yet) would otherwise hold the listener, and every subscriber's
 * start, until the kernel's keepalive gave up hours later.
 */
function listen(client: pg.Client, channel: string): Promise<unknown> {
  return client.query({ text: `LISTEN ${quoteIdent(channel)}`, query_timeout: heartbeat_timeout_ms } as pg.QueryConfig);
}

/** Closes a client now, whatever state its connection is in (end() waits on a silent network). */
export function destroyClient(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  client.end().catch(() => {});
}

/**
 * The process's one LISTEN connection, shared by every channel. One reconnect loop (a single timer,
 * exponential backoff with jitter, a connect timeout, the old client always destroyed) brings it
 * back after any outage and LISTENs again to every channel; a heartbeat notices a silent network.
 */
export class PgListener {
  private client: pg.Client | null = null;
  private readonly subscribers = new Map<string, Set<ListenHandlers>>();
  private timer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private connecting: Promise<void> | null = null;
  // The channels LISTENed on the current client.
  private listened = new Set<string>();
  private failures = 0;
  private closed = false;

  constructor(
    /** A connected client (on the primary, when the URL lists several hosts). */
    private readonly open: () => Promise<pg.Client>,
    private readonly availability: Availability,
  ) {}

  get listening(): boolean {
    return this.client !== null;
  }

  async subscribe(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>> {
    const set = this.subscribers.get(channel) ?? new Set<ListenHandlers>();
    this.subscribers.set(channel, set);
    set.add(handlers);
    await this.connect(); // at once when connected; else one attempt, then the reconnect loop
    await this.listenOn(channel);
    return async () => {
      set.delete(handlers);
      if (set.size > 0) return;
      this.subscribers.delete(channel);
      this.listened.delete(channel);
      if (this.subscribers.size === 0) this.stop();
      else await this.client?.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => {});
    };
  }

  /** A channel subscribed while connected (or while a connect was under way) is LISTENed here. */
  private async listenOn(channel: string): Promise<void> {
    const client = this.client;
    if (!client || this.listened.has(channel)) return;
    this.listened.add(channel);
    await listen(client, channel).catch(() => this.lost(client));
  }

  close(): void {
    this.closed = true;
    this.stop();
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.stopHeartbeat();
    const client = this.client;
    this.client = null;
    if (client) destroyClient(client);
  }

  /** One attempt at a time; failure schedules the next on the one timer. */
  private connect(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.attempt().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async attempt(): Promise<void> {
    let client: pg.Client | undefined;
    const listened = new Set<string>();
    try {
      client = await this.open();
      client.on('error', () => {}); // surfaced as 'end', handled there
      client.on('notification', (m) => {
        for (const h of this.subscribers.get(m.channel) ?? []) h.onPayload(m.payload ?? '');
      });
      // Until every channel is LISTENed, those subscribed meanwhile included; only then is it up.
      for (let left = this.unlistened(listened); left.length > 0; left = this.unlistened(listened)) {
        for (const channel of left) {
          await listen(client, channel);
          listened.add(channel);
        }
      }
    } catch (error) {
      if (client) destroyClient(client);
      this.failures++;
      // A server at its connection limit is up: only the listener waits for a slot. A standby (the
      // primary moved) is found out by the pool's own check. A LISTEN that failed after the connect is
      // this connection's trouble; the pool's own probe judges the server.
      const code = (error as { code?: string } | null)?.code;
      if (!client && code !== '53300' && code !== 'NOT_PRIMARY') this.availability.trip();
      this.schedule();
      return;
    }
    if (this.closed || this.subscribers.size === 0) {
      destroyClient(client);
      return;
    }
    client.on('end', () => this.lost(client));
    this.client = client;
    this.listened = listened;
    this.failures = 0;
    this.startHeartbeat(client);
    this.availability.nudge();
    for (const set of this.subscribers.values()) for (const h of set) h.onRestored?.();
  }

  private unlistened(listened: Set<string>): string[] {
    return [...this.subscribers.keys()].filter((channel) => !listened.has(channel));
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return; // a late 'end' of a client already replaced
    this.client = null;
    this.stopHeartbeat();
    destroyClient(client);
    for (const set of this.subscribers.values()) for (const h of set) h.onLost?.();
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.closed || this.subscribers.size === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.connect();
      },
      backoffMs(this.failures, reconnect_base_ms, reconnect_cap_ms),
    );
    this.timer.unref();
  }

  /**
   * One heartbeat at a time, the next one an interval after the last answer. Silence is judged only
   * after the I/O waiting at that moment is read: a process busy for a second (a burst of work, a
   * loaded machine) fires the timer late, and the answer may already sit in the socket unread.
   */
  private startHeartbeat(client: pg.Client): void {
    this.stopHeartbeat();
    this.heartbeat = setTimeout(() => {
      let answered = false;
      const silence = setTimeout(() => {
        this.heartbeat = setImmediate(() => {
          if (answered || this.client !== client) return;
          this.availability.trip();
          this.lost(client);
        });
      }, heartbeat_timeout_ms);
      silence.unref();
      this.heartbeat = silence;
      client.query('SELECT 1').then(
        () => {
          answered = true;
          clearTimeout(silence);
          if (this.client === client) this.startHeartbeat(client);
        },
        () => {
          answered = true;
          clearTimeout(silence);
          if (this.client !== client) return;
          this.availability.trip();
          this.lost(client);
        },
      );
    }, heartbeat_interval_ms);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) {
      clearTimeout(this.heartbeat as NodeJS.Timeout);
      clearImmediate(this.heartbeat as NodeJS.Immediate);
    }
    this.heartbeat = null;
  }
}
