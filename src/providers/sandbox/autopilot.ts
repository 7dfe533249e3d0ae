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
import { ofAccount } from '../accounts.ts';
import type { CardOutcome } from '../ports.ts';
import { sandbox_card_account, sandboxPayoutOutcome } from './processors.ts';

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
      WHERE status IN ('PENDENTE', 'EM_PROCESSAMENTO') AND ${ofAccount(sandbox_card_account)} AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') AND updated_at <= ${new Date(now.getTime() - card_step_ms)}
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
  pix_key: string;
  pix_key_type: string;
}

/**
 * Cashouts of the in-process sandbox bank, written before payouts went through the Efí connector to
 * the embedded PSP: PENDING → PROCESSING → COMPLETED or REJECTED, so that none is left half way.
 */
export const payoutAutopilotJob: Job = {
  name: 'sandbox-payout-autopilot',
  idle_interval_ms: 100,
  async run(ctx) {
    const now = ctx.clock.now();
    const due = sql`
      SELECT id, status, pix_key, pix_key_type FROM cashouts
      WHERE status IN ('PENDING', 'PROCESSING') AND provider = 'sandbox' AND updated_at <= ${new Date(now.getTime() - payout_step_ms)}
      ORDER BY updated_at LIMIT ${batch_size}`;
    return claimEach<DueCashout>(ctx.db, due, (q, c) =>
      moveCashout(q, c.id, c.status === 'PENDING' ? 'PROCESSING' : sandboxPayoutOutcome(c.pix_key_type, c.pix_key), now),
    );
  },
};
