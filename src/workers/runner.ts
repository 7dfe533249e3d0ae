import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.ts';
import { DatabaseUnavailableError } from '../db/db.ts';
import type { Job } from './job.ts';

const error_backoff_ms = 1_000;

/**
 * Runs each job in its own loop: again at once while it finds work, after its idle interval when it
 * finds none. Jobs coordinate through the database (row locks, SKIP LOCKED), so any number of
 * worker processes may run the same loops.
 */
export class WorkerRunner {
  private stopping = false;
  // Told to the jobs: a round under way ends at its next item instead of running to its end.
  private readonly stop_signal = new AbortController();
  private stopped: Promise<void> | null = null;
  private readonly loops: Promise<void>[] = [];
  private readonly wakers = new Map<string, () => void>();
  // A wake that arrives while the job is running makes it run again at once instead of idling.
  private readonly pendingWakes = new Set<string>();
  private readonly unlisteners: (() => Promise<void>)[] = [];

  constructor(
    private readonly ctx: AppContext,
    private readonly jobs: Job[],
    private readonly log: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    for (const job of this.jobs) {
      if (job.wake_channel) {
        // Wakes missed while the channel was down are made up by one run when it is back; until
        // then the idle interval bounds the delay.
        const wake = () => this.wake(job.name);
        this.unlisteners.push(await this.ctx.db.listen(job.wake_channel, { onPayload: wake, onRestored: wake }));
      }
      this.loops.push(this.loop(job));
    }
  }

  /** Cuts a job's idle wait short, e.g. when a commit signals new work. */
  wake(name: string): void {
    const waker = this.wakers.get(name);
    if (waker) waker();
    else this.pendingWakes.add(name);
  }

  /** Lets the running batches finish, then closes the jobs; a second call waits for the first. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      this.stop_signal.abort(new DOMException('the process is stopping', 'AbortError'));
      for (const wake of this.wakers.values()) wake();
      await Promise.all(this.loops);
      for (const unlisten of this.unlisteners) await unlisten();
      for (const job of this.jobs) await job.close?.();
    })();
    return this.stopped;
  }

  private async loop(job: Job): Promise<void> {
    const wake = () => this.wake(job.name);
    let unavailable = false;
    while (!this.stopping) {
      let pause = job.idle_interval_ms;
      try {
        if ((await job.run(this.ctx, wake, this.log, this.stop_signal.signal)) > 0) pause = 0;
        unavailable = false;
      } catch (err) {
        if (err === this.stop_signal.signal.reason) break;
        // An outage is logged once, not once a second per job; with its reason, since a statement that
        // ran out of time or a pool that stayed full is not the server being away.
        if (!(err instanceof DatabaseUnavailableError)) this.log.error({ err, job: job.name }, 'worker job failed');
        else if (!unavailable) this.log.warn({ job: job.name, reason: err.message }, 'worker job paused: database unavailable');
        unavailable = err instanceof DatabaseUnavailableError;
        pause = error_backoff_ms;
      }
      if (this.pendingWakes.delete(job.name)) pause = 0;
      if (pause > 0 && !this.stopping) await this.sleep(job.name, pause);
    }
  }

  private sleep(name: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const wakers = this.wakers;
      function done() {
        clearTimeout(timer);
        wakers.delete(name);
        resolve();
      }
      wakers.set(name, done);
    });
  }
}
