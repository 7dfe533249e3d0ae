import type { AppContext } from '../context.ts';
import { run, sql } from '../db/sql.ts';
import type { SaleRequest } from '../domain/sale-request.ts';
import type { CardVerdict } from '../providers/ports.ts';
import { moveTransaction } from '../transactions/transitions.ts';

export interface CardLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Hands a written card sale to a processor that decides over the network (CONTRACT §11.2), outside
 * any database transaction, then records its word: the payment's id, what to keep, and the moves.
 * A move the sale no longer allows (a notification got there first) is left as it is.
 */
export async function submitCardSale(ctx: AppContext, saleId: number, sale: SaleRequest, cvv: string, log: CardLogger): Promise<void> {
  if (sale.paymentMethod !== 'CREDIT_CARD' && sale.paymentMethod !== 'DEBIT_CARD') return;
  const connector = ctx.providers.connector(ctx.providers.rails[sale.paymentMethod]);
  if (!connector.authorise) return;
  const verdict = await connector.authorise({
    saleId,
    amountCents: sale.amount,
    method: sale.paymentMethod,
    installments: sale.installments ?? 1,
    card: { ...sale.card, cvv },
    customer: sale.customer,
    shipping: sale.shipping,
  });
  if (verdict.providerData.error) log.warn({ saleId, reason: verdict.providerData.error }, 'card processor: not as planned');
  await recordCardVerdict(ctx, saleId, verdict).catch((error: unknown) => {
    // The processor's word is not lost: its notification repeats it, and a sale left PENDENTE is swept to FALHA.
    log.warn({ err: error, saleId }, 'card verdict not recorded');
  });
}

export async function recordCardVerdict(ctx: AppContext, saleId: number, verdict: CardVerdict): Promise<void> {
  const at = ctx.clock.now();
  await ctx.db.tx(async (q) => {
    await run(
      q,
      sql`UPDATE transactions SET external_transaction_id = coalesce(${verdict.externalId}, external_transaction_id),
            provider_data = coalesce(provider_data, '{}'::jsonb) || ${JSON.stringify(verdict.providerData)}::jsonb WHERE id = ${saleId}`,
    );
    for (const event of verdict.events) {
      const moved = await moveTransaction(q, saleId, event, at);
      if (moved.kind === 'refused' || moved.kind === 'not_found') break;
    }
  });
}
