/**
 * The sandbox processors' autopilots (CONTRACT §6, SANDBOX_AUTOPILOT): they play the outcome the
 * sandbox decided when it saw the card or the PIX key, a step at a time, as a processor would; a
 * card's steps are the processor's facts, applied like any provider's.
 */
import { moveCashout } from '../../cashouts/transitions.ts';
import type { AppContext } from '../../context.ts';
import { run, sql } from '../../db/sql.ts';
import type { Fact, ProviderFact } from '../../domain/provider-facts.ts';
import { claimEach } from '../../workers/claim.ts';
import type { Job } from '../../workers/job.ts';
import { ofAccount } from '../accounts.ts';
import { applyProviderFact } from '../events/apply-fact.ts';
import type { CardOutcome } from '../ports.ts';
import { type SandboxCardProcessor, sandbox_card_account, sandboxPayoutOutcome } from './processors.ts';

const batch_size = 100;
// Each card step waits this long, so a card sale settles within about a second.
const card_step_ms = 300;
// Two payout steps of this length: a cashout settles within about two seconds.
const payout_step_ms = 600;

interface DueCard {
  id: number;
  status: 'PENDENTE' | 'EM_PROCESSAMENTO';
  outcome: CardOutcome | null;
  external_transaction_id: string;
  amount: number;
}

/**
 * What the sandbox card processor tells of a sale at each step, as any processor's word: taken
 * (PENDENTE → EM_PROCESSAMENTO), then the outcome it decided when it saw the card: authorised and
 * captured (PAGO), refused (RECUSADO), or a failed capture (FALHA).
 */
function stepFact(card: DueCard): ProviderFact {
  const paymentId = card.external_transaction_id;
  const sale = { ids: [paymentId], saleId: Number(card.id), referenceSuffices: true };
  const told = (step: string, fact: Fact): ProviderFact => ({
    provider: 'sandbox',
    identity: `${paymentId}:${step}`,
    externalReference: paymentId,
    fact,
  });
  if (card.status === 'PENDENTE')
    return told('taken', { kind: 'CARD_ANSWER', sale, paymentId, result: 'PENDING', captureByGateway: false, data: {} });
  const amount = Number(card.amount);
  if (card.outcome === 'PROCESSING_ERROR') return told('outcome', { kind: 'CAPTURE', sale, paymentId, amount, currency: 'BRL', captured: false });
  const authorised = card.outcome !== 'DECLINED';
  return told('outcome', { kind: 'AUTHORISATION', sale, paymentId, amount, currency: 'BRL', authorised, captureByGateway: false });
}

/** The sandbox card processor: PENDENTE → EM_PROCESSAMENTO → the outcome it decided at authorization, a step every 300 ms, through the one apply step. */
export const cardAutopilotJob: Job = {
  name: 'sandbox-card-autopilot',
  idle_interval_ms: 100,
  async run(ctx) {
    const now = ctx.clock.now();
    const due = await run<DueCard>(
      ctx.db,
      sql`SELECT id, status, provider_data->>'sandboxOutcome' AS outcome, external_transaction_id, amount FROM transactions
          WHERE status IN ('PENDENTE', 'EM_PROCESSAMENTO') AND ${ofAccount(sandbox_card_account)} AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD')
            AND updated_at <= ${new Date(now.getTime() - card_step_ms)}
            -- A sale waiting for its shopper's authentication (3-D Secure) is the shopper's to move, not the autopilot's.
            AND NOT EXISTS (SELECT 1 FROM card_authentications a WHERE a.transaction_id = transactions.id AND a.result IS NULL)
          ORDER BY updated_at LIMIT ${batch_size}`,
    );
    let moved = 0;
    const processor = sandboxProcessor(ctx);
    for (const card of due.rows) {
      // What it authorises it settles (CONTRACT §15): booked in its record before the outcome is told, so a
      // sale never turns PAGO without it (booking twice keeps one).
      if (card.status === 'EM_PROCESSAMENTO' && card.outcome !== 'DECLINED' && card.outcome !== 'PROCESSING_ERROR')
        await processor?.settle({ saleId: Number(card.id), paymentId: card.external_transaction_id, amountCents: Number(card.amount) });
      // Another worker may tell the same step at once: the store keeps one, and the other is a repeat.
      if ((await applyProviderFact(ctx, stepFact(card))).state === 'applied') moved++;
    }
    return moved;
  },
};

/** The sandbox card processor of this process, when the card rail is (or was) the sandbox's. */
function sandboxProcessor(ctx: AppContext): SandboxCardProcessor | null {
  const port = ctx.providers.all('CARD').find((p) => p.account.id === sandbox_card_account.id);
  return port && 'settle' in port ? (port as SandboxCardProcessor) : null;
}

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
