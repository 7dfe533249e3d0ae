/**
 * The sandbox processors' autopilots (CONTRACT §6, SANDBOX_AUTOPILOT): they play the outcome the
 * sandbox decided when it saw the card or the PIX key, a step at a time, as a processor would.
 */
import { moveCashout } from '../../cashouts/transitions.ts';
import { sql } from '../../db/sql.ts';
import type { TransactionEvent } from '../../domain/transaction-states.ts';
import { moveTransaction } from '../../transactions/transitions.ts';
import { claimEach } from '../../workers/claim.ts';
import type { Job } from '../../workers/job.ts';
import { type CardOutcome, operation, type PayoutOutcome } from '../ports.ts';

const batch_size = 100;
// Each card step waits this long, so a card sale settles within about a second.
const card_step_ms = 300;
// Two payout steps of this length: a cashout settles within about two seconds.
const payout_step_ms = 600;

const outcome_events: Record<CardOutcome, TransactionEvent> = { APPROVED: 'APPROVED', DECLINED: 'DECLINED', PROCESSING_ERROR: 'PROCESSING_ERROR' };

/** The sandbox card processor: PENDENTE → EM_PROCESSAMENTO → the outcome it decided at authorization. */
export const cardAutopilotJob: Job = {
  name: 'sandbox-card-autopilot',
  idle_interval_ms: 100,
  async run(ctx) {
    const now = ctx.clock.now();
    const due = sql`
      SELECT id, status, provider_data->>'sandboxOutcome' AS outcome FROM transactions
      WHERE status IN ('PENDENTE', 'EM_PROCESSAMENTO') AND provider = 'sandbox' AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') AND updated_at <= ${new Date(now.getTime() - card_step_ms)}
      ORDER BY updated_at LIMIT ${batch_size}`;
    return claimEach<{ id: number; status: string; outcome: CardOutcome | null }>(ctx.db, due, (q, row) => {
      const event = row.status === 'PENDENTE' ? 'SENT_TO_PROCESSOR' : outcome_events[row.outcome ?? 'APPROVED'];
      return moveTransaction(q, row.id, event, now);
    });
  },
};

interface DueCashout {
  id: number;
  status: string;
  amount: number;
  pix_key: string;
  pix_key_type: string;
  outcome: PayoutOutcome | null;
}

/** The sandbox payout provider: PENDING → (sent) PROCESSING → its result, COMPLETED or REJECTED. */
export const payoutAutopilotJob: Job = {
  name: 'sandbox-payout-autopilot',
  idle_interval_ms: 100,
  async run(ctx) {
    const now = ctx.clock.now();
    const due = sql`
      SELECT id, status, amount, pix_key, pix_key_type, provider_data->>'sandboxOutcome' AS outcome FROM cashouts
      WHERE status IN ('PENDING', 'PROCESSING') AND provider = 'sandbox' AND updated_at <= ${new Date(now.getTime() - payout_step_ms)}
      ORDER BY updated_at LIMIT ${batch_size}`;
    return claimEach<DueCashout>(ctx.db, due, async (q, c) => {
      if (c.status !== 'PENDING') return moveCashout(q, c.id, c.outcome ?? 'COMPLETED', now);
      // Persisted first (PENDING), then sent, then updated with what the provider answered.
      const payout = operation(ctx.providers.connector('sandbox'), 'payout');
      const sent = payout({ cashoutId: c.id, amountCents: c.amount, pixKey: c.pix_key, pixKeyType: c.pix_key_type });
      return moveCashout(q, c.id, 'PROCESSING', now, sent);
    });
  },
};
