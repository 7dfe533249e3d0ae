import type { AppContext } from '../context.ts';
import { saoPauloDate } from '../domain/calendar.ts';
import type { TransactionEvent } from '../domain/transaction-states.ts';
import type { CardOutcome } from '../providers/ports.ts';
import type { Job } from '../workers/job.ts';
import { moveTransaction, releaseReserve } from './transitions.ts';

const batch_size = 100;
const boleto_grace_days = 3;
// Each sandbox step waits this long, so a card sale settles within about a second (CONTRACT §6).
const autopilot_step_ms = 300;

/** PIX past expiresAt (strictly after it) and boletos past due date + 3 days become CANCELADO. */
export const expiryJob: Job = {
  name: 'transaction-expiry',
  idle_interval_ms: 1_000,
  async run(ctx) {
    const now = ctx.clock.now();
    return ctx.db.tx(async (q) => {
      const due = await q.query<{ id: number }>(
        `
        SELECT id FROM transactions
        WHERE status = 'PENDENTE' AND (
          (payment_method = 'PIX' AND pix_expires_at < $1) OR
          (payment_method = 'BOLETO' AND boleto_due_date < $2::date - $3::int))
        ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED`,
        [now, saoPauloDate(now), boleto_grace_days, batch_size],
      );
      for (const { id } of due.rows) await moveTransaction(q, id, 'EXPIRED', now);
      return due.rowCount;
    });
  },
};

const outcome_events: Record<CardOutcome, TransactionEvent> = { APPROVED: 'APPROVED', DECLINED: 'DECLINED', PROCESSING_ERROR: 'PROCESSING_ERROR' };

/** The sandbox card processor: PENDENTE → EM_PROCESSAMENTO → the outcome it decided at authorization. */
export const cardAutopilotJob: Job = {
  name: 'sandbox-card-autopilot',
  idle_interval_ms: 100,
  async run(ctx: AppContext) {
    const now = ctx.clock.now();
    return ctx.db.tx(async (q) => {
      const ready = await q.query<{ id: number; status: string; outcome: CardOutcome | null }>(
        `
        SELECT id, status, provider_data->>'sandboxOutcome' AS outcome FROM transactions
        WHERE status IN ('PENDENTE', 'EM_PROCESSAMENTO') AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD')
          AND provider_data ? 'sandboxOutcome' AND updated_at <= $1
        ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [new Date(now.getTime() - autopilot_step_ms), batch_size],
      );
      for (const row of ready.rows) {
        const event = row.status === 'PENDENTE' ? 'SENT_TO_PROCESSOR' : outcome_events[row.outcome ?? 'APPROVED'];
        await moveTransaction(q, row.id, event, now);
      }
      return ready.rowCount;
    });
  },
};

/**
 * Releases reserves that fell due, for sales in PAGO. A sale in MED or CHARGEBACK waits: its
 * release happens on its return to PAGO (with that move's postings); after ESTORNADO there is none to release.
 */
export const reserveReleaseJob: Job = {
  name: 'reserve-release',
  idle_interval_ms: 5_000,
  async run(ctx) {
    const now = ctx.clock.now();
    return ctx.db.tx(async (q) => {
      const due = await q.query<{ id: number }>(
        `
        SELECT id FROM transactions
        WHERE reserve_held > 0 AND reserve_release_at <= $1 AND status = 'PAGO'
        ORDER BY reserve_release_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [now, batch_size],
      );
      for (const { id } of due.rows) await releaseReserve(q, id, now);
      return due.rowCount;
    });
  },
};
