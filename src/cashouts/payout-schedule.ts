/**
 * When the payout job next looks at a cashout (CONTRACT §11.3): the one owner of `next_check_at`.
 * A cashout is looked at as soon as it is asked; a round that takes it looks again an interval later
 * while its payout is under way; a PSP that asks to wait is waited for; a completed payout is asked
 * about returns at growing intervals for 7 days; a cashout rejected or cancelled is never again.
 */
import type { Queryable } from '../db/db.ts';
import { run, type Sql, sql } from '../db/sql.ts';
import type { CashoutStatus } from '../domain/cashout-states.ts';

// A completed payout may still come back from the receiver's bank: first asked about an hour later, then at growing intervals.
const first_return_check_ms = 60 * 60_000;
const return_window_ms = 7 * 24 * 3600_000;

/** A new cashout: its payout is sent by the next round. */
export const firstCheck = (now: Date): Date => now;

/** After a move to `to` (`given`: what the provider's answer sets, undefined to follow the move); null when none is left. */
export function checkAfterMove(before: Date | null, to: CashoutStatus, at: Date, given?: Date | null): Date | null {
  if (given !== undefined) return given;
  if (before === null || to === 'REJECTED' || to === 'CANCELLED') return null;
  return to === 'COMPLETED' ? new Date(at.getTime() + first_return_check_ms) : before;
}

/** As a round takes the cashouts of table alias `c`: under way, an interval on; completed, half its age on (an hour at least) until the window closes. */
export function checkAfterClaim(now: Date, intervalMs: number): Sql {
  return sql`CASE
    WHEN c.status IN ('PENDING', 'PROCESSING') THEN ${new Date(now.getTime() + intervalMs)}::timestamptz
    WHEN c.status = 'COMPLETED' AND c.processed_at > ${new Date(now.getTime() - return_window_ms)}::timestamptz
      THEN ${now}::timestamptz + greatest(interval '1 hour', (${now}::timestamptz - c.processed_at) / 2)
  END`;
}

/** The PSP asked to be left alone longer than the round's interval (its Retry-After): the next send waits for it. */
export async function waitForProvider(q: Queryable, cashoutId: number, now: Date, waitMs: number, intervalMs: number): Promise<void> {
  if (waitMs <= intervalMs) return;
  await run(q, sql`UPDATE cashouts SET next_check_at = ${new Date(now.getTime() + waitMs)} WHERE id = ${cashoutId}`);
}
