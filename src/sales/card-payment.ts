import type { AppContext } from '../context.ts';
import { maybeOne, run, sql } from '../db/sql.ts';
import type { SaleRequest } from '../domain/sale-request.ts';
import { applyProviderFact } from '../providers/events/apply-fact.ts';
import type { CardAuthentication } from '../providers/ports.ts';

export interface CardLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Hands a written card sale to its processor (CONTRACT §11.2), outside any database transaction;
 * the processor's word is a fact like any other, through the one apply step. A processor that
 * decides later (the sandbox's) says nothing now. When the issuer wants the shopper (3-D Secure),
 * where its browser goes is kept with the sale's authentication, for the shopper's page.
 */
export async function submitCardSale(ctx: AppContext, saleId: number, sale: SaleRequest, cvv: string, log: CardLogger): Promise<void> {
  if (sale.paymentMethod !== 'CREDIT_CARD' && sale.paymentMethod !== 'DEBIT_CARD') return;
  const authentication = sale.authentication ? await shopperSide(ctx, saleId, sale.authentication) : null;
  const answer = await ctx.providers.rail(sale.paymentMethod).authorise({
    saleId,
    amountCents: sale.amount,
    method: sale.paymentMethod,
    installments: sale.installments ?? 1,
    card: { ...sale.card, cvv },
    customer: sale.customer,
    shipping: sale.shipping,
    authentication,
  });
  if (authentication) {
    // Written before the facts: a sale that moves on at once (asked nothing) is then not left waiting.
    const done = answer.action
      ? sql`UPDATE card_authentications SET action = ${JSON.stringify(answer.action)}::jsonb WHERE transaction_id = ${saleId} AND result IS NULL`
      : sql`UPDATE card_authentications SET result = 'NOT_ASKED' WHERE transaction_id = ${saleId} AND result IS NULL`;
    await run(ctx.db, done).catch((failure: unknown) => log.warn({ err: failure, saleId }, 'card authentication step not recorded'));
  }
  for (const fact of answer.facts) {
    const error = 'data' in fact.fact ? fact.fact.data.error : undefined;
    if (error) log.warn({ saleId, reason: error }, 'card processor: not as planned');
    await applyProviderFact(ctx, fact).catch((failure: unknown) => {
      // The processor's word is not lost: its notification repeats it, and a sale left PENDENTE is swept to FALHA.
      log.warn({ err: failure, saleId }, 'card answer not recorded');
    });
  }
}

/** The shopper's browser as the seller sent it, with the gateway's pages the issuer sends it back to. */
async function shopperSide(ctx: AppContext, saleId: number, given: NonNullable<SaleRequest['authentication']>): Promise<CardAuthentication> {
  const row = await maybeOne(await run<{ token: string }>(ctx.db, sql`SELECT token FROM card_authentications WHERE transaction_id = ${saleId}`));
  if (!row) throw new Error(`sale ${saleId} was written without its authentication`);
  const base = ctx.config.publicBaseUrl;
  return {
    baseUrl: base,
    origin: new URL(base).origin,
    returnUrl: `${base}/checkout/3ds/${row.token}/return`,
    token: row.token,
    browser: given.browser,
    ip: given.ip,
  };
}
