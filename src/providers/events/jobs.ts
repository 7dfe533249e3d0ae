/**
 * The provider-event store's jobs (CONTRACT §14): held facts tried again whenever their sale moves
 * (a move of a sale with held facts wakes this job) and every minute; calls owed to providers sent
 * again until they get through.
 */
import { held_facts_channel } from '../../transactions/transitions.ts';
import type { Job, JobLog } from '../../workers/job.ts';
import { applyHeld } from './apply-fact.ts';
import { sendFollowup } from './followups.ts';
import { followupsDue, heldSince, salesWithHeld } from './store.ts';

const batch_size = 50;
// Held this long, a fact is an error for the operator: what it waits for is not coming by itself.
const held_alarm_ms = 60 * 60_000;
// A followup younger than this may still be in its request's hands.
const followup_grace_ms = 10_000;
// After a failed round the runner calls again within a second; a provider that is down is asked again only this much later.
const retry_after_failure_ms = 30_000;
const silent: JobLog = { warn() {}, error() {} };

export const heldFactsJob: Job = {
  name: 'provider-events-held',
  idle_interval_ms: 60_000,
  wake_channel: held_facts_channel,
  async run(ctx, _wake, log = silent, stopping) {
    const at = ctx.clock.now();
    let moved = 0;
    for (const sale of await salesWithHeld(ctx.db, batch_size)) {
      stopping?.throwIfAborted();
      if (sale.moved) moved++;
      const events = await ctx.db.tx((q) => applyHeld(q, sale.saleId, at));
      for (const event of events) await sendFollowup(ctx, event.id).catch(() => {});
    }
    const stale = await heldSince(ctx.db, new Date(at.getTime() - held_alarm_ms), batch_size);
    for (const event of stale)
      log.error(
        { providerEvent: event.id, provider: event.provider, kind: event.kind, transactionId: event.transaction_id, reason: event.reason },
        'provider event held for over an hour',
      );
    // Sales that moved are taken until none is left; facts that still cannot apply wait for the interval.
    return moved;
  },
};

/** Calls owed to providers (captures, money sent back) that did not get through after their fact. */
export function createFollowupJob(pollAfterMs: number): Job {
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    name: 'provider-followups',
    idle_interval_ms: 5_000,
    async run(ctx, _wake, log = silent, stopping) {
      const now = ctx.clock.now();
      if (now.getTime() - failedAt < retry_after_failure_ms) return 0;
      const due = await followupsDue(ctx.db, now, followup_grace_ms, pollAfterMs, batch_size);
      let failures = 0;
      for (const event of due) {
        stopping?.throwIfAborted();
        await sendFollowup(ctx, event.id).catch((err: unknown) => {
          failures++;
          log.warn({ err, providerEvent: event.id, followup: event.followup }, 'provider followup not sent; will retry');
        });
      }
      if (failures > 0) failedAt = now.getTime();
      return due.length - failures;
    },
  };
}
