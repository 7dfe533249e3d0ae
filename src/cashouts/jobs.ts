import type { PayoutOutcome } from '../providers/ports.ts';
import type { Job } from '../workers/job.ts';
import { moveCashout } from './transitions.ts';

const batch_size = 100;
// Two steps of this length: a cashout settles within about two seconds (CONTRACT §6).
const autopilot_step_ms = 600;

/** The sandbox payout provider: PENDING → (sent) PROCESSING → its result, COMPLETED or REJECTED. */
export const payoutAutopilotJob: Job = {
  name: 'sandbox-payout-autopilot',
  idle_interval_ms: 100,
  async run(ctx) {
    const now = ctx.clock.now();
    return ctx.db.tx(async (q) => {
      const ready = await q.query<{
        id: number;
        status: string;
        amount: number;
        pix_key: string;
        pix_key_type: string;
        outcome: PayoutOutcome | null;
      }>(
        `
        SELECT id, status, amount, pix_key, pix_key_type, provider_data->>'sandboxOutcome' AS outcome FROM cashouts
        WHERE status IN ('PENDING', 'PROCESSING') AND updated_at <= $1
        ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [new Date(now.getTime() - autopilot_step_ms), batch_size],
      );
      for (const c of ready.rows) {
        if (c.status === 'PENDING') {
          // Persisted first (PENDING), then sent, then updated with what the provider answered.
          const sent = ctx.providers.payout.send({ cashoutId: c.id, amountCents: c.amount, pixKey: c.pix_key, pixKeyType: c.pix_key_type });
          await moveCashout(q, c.id, 'PROCESSING', now, sent);
        } else {
          await moveCashout(q, c.id, c.outcome ?? 'COMPLETED', now);
        }
      }
      return ready.rowCount;
    });
  },
};
