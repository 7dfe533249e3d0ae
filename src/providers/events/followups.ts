/**
 * Calls the gateway owes a provider because of a fact (CONTRACT §11): the capture of an authorised
 * payment (manual capture), and money a sale cannot take sent back whole (an Adyen reversal, a
 * Pix devolução). Made outside any transaction, after the fact committed; idempotent at the provider
 * (the same key each time), so the job simply sends again what has not got through.
 */
import type { AppContext } from '../../context.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import type { Fact } from '../../domain/provider-facts.ts';
import type { PaymentMethod } from '../../domain/transaction-states.ts';
import { unclaimedReturned } from '../../ledger/unclaimed.ts';
import { AccountNotConfigured, CAPABILITY_OF, type CardProcessor, type PixPsp } from '../ports.ts';
import { portOf } from '../registry.ts';
import { type StoredEvent, setFollowup, unclaimedOf } from './store.ts';

/** The payment a fact concerns, as its provider names it. */
function paymentOf(fact: Fact): string | null {
  if (fact.kind === 'PIX_RECEIVED') return fact.endToEndId;
  return 'paymentId' in fact && typeof fact.paymentId === 'string' ? fact.paymentId : null;
}

/**
 * The port the followup goes to: the account of the sale the fact concerns, when the sale was made
 * with that capability; else (a boleto's Pix, a fact of no sale) the configured account of the
 * connector that told it, the PSP that received the Pix.
 */
async function portFor(ctx: AppContext, event: StoredEvent): Promise<PixPsp | CardProcessor> {
  const capability = event.fact.kind === 'PIX_RECEIVED' ? 'PIX' : 'CARD';
  const sale =
    event.transaction_id === null
      ? null
      : maybeOne(
          await run<{ account: string | null; payment_method: PaymentMethod }>(
            ctx.db,
            sql`SELECT account, payment_method FROM transactions WHERE id = ${event.transaction_id}`,
          ),
        );
  const own = sale !== null && CAPABILITY_OF[sale.payment_method] === capability ? sale.account : null;
  return portOf(ctx.providers, capability, { account: own, provider: event.provider });
}

/** Sends the followup of one event, as it is now (another process may have sent it meanwhile). */
export async function sendFollowup(ctx: AppContext, eventId: number): Promise<void> {
  const event = maybeOne(await run<StoredEvent>(ctx.db, sql`SELECT * FROM provider_events WHERE id = ${eventId}`));
  if (!event?.followup || event.followup_status === 'DONE' || event.followup_status === 'REFUSED') return;
  const paymentId = paymentOf(event.fact);
  if (paymentId === null || (event.amount === null && event.followup === 'RETURN'))
    throw new Error(`provider event ${event.id}: a followup without a payment`);
  try {
    const port = await portFor(ctx, event).catch(async (error: unknown) => {
      if (!(error instanceof AccountNotConfigured)) throw error;
      // Never sent to another account: the operator sees why, and the job does not ask again.
      await setFollowup(ctx.db, event.id, 'REFUSED', error.message, ctx.clock.now());
      return null;
    });
    if (port === null) return;
    if (event.followup === 'CAPTURE') {
      if (port.capability !== 'CARD') throw new Error(`provider event ${event.id}: a capture owed to a ${port.capability} port`);
      await capture(ctx, port, event, paymentId);
      return;
    }
    const key = event.followup_key ?? undefined;
    const sent = await port.giveBack({ paymentId, amountCents: Number(event.amount), ...(key ? { key } : {}) });
    await ctx.db.tx(async (q) => {
      await setFollowup(q, event.id, sent.status, sent.detail, ctx.clock.now());
      if (sent.status === 'DONE' && event.fact.kind === 'PIX_RECEIVED') await unclaimedReturned(q, unclaimedOf(event), sent.reference ?? null);
    });
  } catch (error) {
    // Not through: tried again a grace period from now.
    await setFollowup(ctx.db, event.id, event.followup_status ?? 'TO_SEND', null, ctx.clock.now()).catch(() => {});
    throw error;
  }
}

/** The one capture of a sale's payment (manual capture): its reference kept with the sale. */
async function capture(ctx: AppContext, port: CardProcessor, event: StoredEvent, paymentId: string): Promise<void> {
  const saleId = Number(event.transaction_id);
  const amountCents = Number(
    event.amount ?? maybeOne(await run<{ amount: number }>(ctx.db, sql`SELECT amount FROM transactions WHERE id = ${saleId}`))?.amount,
  );
  const captured = await port.capture({ saleId, paymentId, amountCents });
  const ref = captured.status === 'DONE' ? captured.detail : `refused: ${captured.detail}`;
  await ctx.db.tx(async (q) => {
    await run(q, sql`UPDATE transactions SET provider_data = provider_data || jsonb_build_object('captureRef', ${ref}::text) WHERE id = ${saleId}`);
    await setFollowup(q, event.id, captured.status, captured.detail, ctx.clock.now());
  });
}
