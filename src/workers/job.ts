import type { AppContext } from '../context.ts';

/** Where a job says what needs a person (the runner's logger; silent when a test runs a job by hand). */
export interface JobLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A background job: run() handles one batch and says how many items it handled. */
export interface Job {
  name: string;
  idle_interval_ms: number;
  /** A LISTEN channel whose notifications cut the idle wait short (work committed elsewhere). */
  wake_channel?: string;
  /**
   * `wake` makes the runner call run() again at once (e.g. when work finishing in the background frees
   * capacity). `stopping` aborts when the process stops: a round that goes item by item ends before
   * its next item (`stopping.throwIfAborted()`), and what it did not reach waits for the next process.
   */
  run(ctx: AppContext, wake?: () => void, log?: JobLog, stopping?: AbortSignal): Promise<number>;
  close?(): Promise<void>;
}
