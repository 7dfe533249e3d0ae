/**
 * Calls the gateway owes a provider because of a fact (CONTRACT §11): the capture of an authorised
 * payment (manual capture), and money a sale cannot take sent back whole (an Adyen reversal, a
 * Pix devolução). Made outside any transaction, after the fact committed; idempotent at the provider
 * (the same key each time), so the job simply sends again what has not got through.
 */
import type { AppContext } from '../../context.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import type { Fact } from '../../domain/provider-facts.ts';
import { operation } from '../ports.ts';
import { type StoredEvent, setFollowup } from './store.ts';

/** The payment a fact concerns, as its provider names it. */
function paymentOf(fact: Fact): string | null {
  if (fact.kind === 'PIX_RECEIVED') return fact.endToEndId;
  return 'paymentId' in fact && typeof fact.paymentId === 'string' ? fact.paymentId : null;
}

/** Sends the followup of one event, as it is now (another process may have sent it meanwhile). */
export async function sendFollowup(ctx: AppContext, eventId: number): Promise<void> {
  const event = maybeOne(await run<StoredEvent>(ctx.db, sql`SELECT * FROM provider_events WHERE id = ${eventId}`));
  if (!event?.followup || event.followup_status === 'DONE' || event.followup_status === 'REFUSED') return;
  const connector = ctx.providers.connector(event.provider);
  const paymentId = paymentOf(event.fact);
  if (paymentId === null || event.amount === null) throw new Error(`provider event ${event.id}: a followup without a payment`);
  const amountCents = Number(event.amount);
  try {
    if (event.followup === 'CAPTURE') {
      const saleId = Number(event.transaction_id);
      const captured = await operation(connector, 'capture')({ saleId, paymentId, amountCents });
      const ref = captured.status === 'DONE' ? captured.detail : `refused: ${captured.detail}`;
      await ctx.db.tx(async (q) => {
        await run(
          q,
          sql`UPDATE transactions SET provider_data = provider_data || jsonb_build_object('captureRef', ${ref}::text) WHERE id = ${saleId}`,
        );
        await setFollowup(q, event.id, captured.status, captured.detail, ctx.clock.now());
      });
      return;
    }
    const key = event.followup_key ?? undefined;
    const sent = await operation(connector, 'cancel')({ kind: 'payment', paymentId, amountCents, ...(key ? { key } : {}) });
    await setFollowup(ctx.db, event.id, sent.status, sent.detail, ctx.clock.now());
  } catch (error) {
    // Not through: tried again a grace period from now.
    await setFollowup(ctx.db, event.id, event.followup_status ?? 'TO_SEND', null, ctx.clock.now()).catch(() => {});
    throw error;
  }
}
