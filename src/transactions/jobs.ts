import type { AppContext } from '../context.ts';
import { run, sql } from '../db/sql.ts';
import { saoPauloDate } from '../domain/calendar.ts';
import { claimEach } from '../workers/claim.ts';
import type { Job } from '../workers/job.ts';
import { moveTransaction, releaseReserve } from './transitions.ts';

const batch_size = 100;
const boleto_grace_days = 3;

/** PIX past expiresAt (strictly after it) and boletos past due date + 3 days become CANCELADO. */
export const expiryJob: Job = {
  name: 'transaction-expiry',
  idle_interval_ms: 1_000,
  async run(ctx) {
    const now = ctx.clock.now();
    const due = sql`
      SELECT id FROM transactions
      WHERE status = 'PENDENTE' AND (
        (payment_method = 'PIX' AND pix_expires_at < ${now}) OR
        (payment_method = 'BOLETO' AND boleto_due_date < ${saoPauloDate(now)}::date - ${boleto_grace_days}::int))
      ORDER BY id LIMIT ${batch_size}`;
    const expired = await claimEach<{ id: number }>(ctx.db, due, (q, { id }) => moveTransaction(q, id, 'EXPIRED', now));
    return expired + (await cancelAbandoned(ctx, now));
  },
};

/**
 * Card sales whose shopper did not come back from 3-D Secure in time (CONTRACT §11.2): PENDENTE →
 * CANCELADO, the authentication failed. Nothing was debited; a late AUTHORISATION is a fact the
 * sale can no longer take, and goes to the operator.
 */
async function cancelAbandoned(ctx: AppContext, now: Date): Promise<number> {
  const due = sql`
    SELECT a.transaction_id AS id FROM card_authentications a JOIN transactions t ON t.id = a.transaction_id
    WHERE a.returned_at IS NULL AND a.result IS NULL AND a.expires_at <= ${now} AND t.status = 'PENDENTE'
    ORDER BY a.expires_at LIMIT ${batch_size}`;
  return claimEach<{ id: number }>(ctx.db, due, async (q, { id }) => {
    await run(q, sql`UPDATE card_authentications SET result = 'FAILED' WHERE transaction_id = ${id} AND result IS NULL`);
    return moveTransaction(q, id, 'CANCELLED', now);
  });
}

/**
 * Releases reserves that fell due, for sales in PAGO. A sale in MED or CHARGEBACK waits: its
 * release happens on its return to PAGO (with that move's postings); after ESTORNADO there is none to release.
 */
export const reserveReleaseJob: Job = {
  name: 'reserve-release',
  idle_interval_ms: 5_000,
  async run(ctx) {
    const now = ctx.clock.now();
    const due = sql`
      SELECT id FROM transactions
      WHERE reserve_held > 0 AND reserve_release_at <= ${now} AND status = 'PAGO'
      ORDER BY reserve_release_at LIMIT ${batch_size}`;
    return claimEach<{ id: number }>(ctx.db, due, (q, { id }) => releaseReserve(q, id, now));
  },
};
