import type { AppContext } from '../context.ts';
import type { SaleRequest } from '../domain/sale-request.ts';
import { applyProviderFact } from '../providers/events/apply-fact.ts';

export interface CardLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Hands a written card sale to its processor (CONTRACT §11.2), outside any database transaction;
 * the processor's word is a fact like any other, through the one apply step. A processor that
 * decides later (the sandbox's) says nothing now.
 */
export async function submitCardSale(ctx: AppContext, saleId: number, sale: SaleRequest, cvv: string, log: CardLogger): Promise<void> {
  if (sale.paymentMethod !== 'CREDIT_CARD' && sale.paymentMethod !== 'DEBIT_CARD') return;
  const facts = await ctx.providers.rail(sale.paymentMethod).authorise({
    saleId,
    amountCents: sale.amount,
    method: sale.paymentMethod,
    installments: sale.installments ?? 1,
    card: { ...sale.card, cvv },
    customer: sale.customer,
    shipping: sale.shipping,
  });
  for (const fact of facts) {
    const error = 'data' in fact.fact ? fact.fact.data.error : undefined;
    if (error) log.warn({ saleId, reason: error }, 'card processor: not as planned');
    await applyProviderFact(ctx, fact).catch((failure: unknown) => {
      // The processor's word is not lost: its notification repeats it, and a sale left PENDENTE is swept to FALHA.
      log.warn({ err: failure, saleId }, 'card answer not recorded');
    });
  }
}
