import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Config } from '../config.ts';
import { createDeliveryJob } from '../notifications/delivery.ts';
import { payoutAutopilotJob } from '../cashouts/jobs.ts';
import { cardAutopilotJob, expiryJob, reserveReleaseJob } from '../transactions/jobs.ts';

/** A background job: run() handles one batch and says how many items it handled. */
export interface Job {
  name: string;
  idle_interval_ms: number;
  /** A LISTEN channel whose notifications cut the idle wait short (work committed elsewhere). */
  wake_channel?: string;
  run(ctx: AppContext): Promise<number>;
  close?(): Promise<void>;
}

const error_backoff_ms = 1_000;

/**
 * Runs each job in its own loop: again at once while it finds work, after its idle interval when it
 * finds none. Jobs coordinate through the database (row locks, SKIP LOCKED), so any number of
 * worker processes may run the same loops.
 */
export class WorkerRunner {
  private stopping = false;
  private readonly loops: Promise<void>[] = [];
  private readonly wakers = new Map<string, () => void>();

  constructor(private readonly ctx: AppContext, private readonly jobs: Job[], private readonly log: FastifyBaseLogger) {}

  private readonly unlisteners: (() => Promise<void>)[] = [];

  async start(): Promise<void> {
    for (const job of this.jobs) {
      if (job.wake_channel) {
        // If the channel is lost, the idle interval still bounds the delay.
        this.unlisteners.push(await this.ctx.db.listen(job.wake_channel, () => this.wake(job.name)).catch(() => async () => {}));
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

  // A wake that arrives while the job is running makes it run again at once instead of idling.
  private readonly pendingWakes = new Set<string>();

  async stop(): Promise<void> {
    this.stopping = true;
    for (const wake of this.wakers.values()) wake();
    await Promise.all(this.loops);
    for (const unlisten of this.unlisteners) await unlisten();
    for (const job of this.jobs) await job.close?.();
  }

  private async loop(job: Job): Promise<void> {
    while (!this.stopping) {
      let pause = job.idle_interval_ms;
      try {
        if ((await job.run(this.ctx)) > 0) pause = 0;
      } catch (err) {
        this.log.error({ err, job: job.name }, 'worker job failed');
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
      function done() { clearTimeout(timer); wakers.delete(name); resolve(); }
      wakers.set(name, done);
    });
  }
}

/** The jobs this gateway runs; features add theirs here. */
export function allJobs(config: Config): Job[] {
  return [createDeliveryJob(), expiryJob, reserveReleaseJob, ...(config.sandboxAutopilot ? [cardAutopilotJob, payoutAutopilotJob] : [])];
}
