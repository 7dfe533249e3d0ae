/**
 * A seller's sale (CONTRACT §4, §11): checked, its charge made before the write when the method has
 * one at a provider, written with its Idempotency-Key's answer, then handed to a card processor
 * that decides over the network. One request never makes two provider calls: a keyed request that
 * calls a provider claims its key first, and a replay calls nothing.
 */
import type { AppContext } from '../context.ts';
import { validationError } from '../domain/errors.ts';
import type { ProviderReference } from '../domain/provider-reference.ts';
import { ok, type Refused } from '../domain/result.ts';
import { type SaleRequest, validateSaleRequest } from '../domain/sale-request.ts';
import { idempotentWrite, type Written } from '../http/idempotent-write.ts';
import { notificationUrlProblem } from '../notifications/target-url.ts';
import { submitCardSale } from './card-payment.ts';
import { type Prepared, plannedSale, prepareProvider } from './create-sale.ts';
import { saleCreatedView } from './sale-view.ts';
import { writeSale } from './sale-writes.ts';

export interface SaleAsk {
  sellerId: number;
  /** The body as sent: checked inside the idempotent request, so a 400 is stored and replayed like any refusal. */
  body: unknown;
  idempotencyKey: string | undefined;
  log: { warn(obj: object, msg: string): void };
}

type Preparation = { ok: true; value: Prepared } | Refused;

export async function sell(ctx: AppContext, ask: SaleAsk): Promise<Written> {
  const now = ctx.clock.now();
  const parsed = validateSaleRequest(ask.body, now);
  const answer = await idempotentWrite(
    {
      db: ctx.db,
      fingerprintKey: ctx.requestFingerprintKey,
      sellerId: ask.sellerId,
      endpoint: 'POST /api/sales',
      key: ask.idempotencyKey,
      body: ask.body,
      now,
    },
    (prepared) => {
      if (!parsed.ok) return parsed;
      const made = prepared ?? ok({ pix: null, boleto: null, account: null });
      if (!made.ok) return made;
      const sale = plannedSale(ctx, ask.sellerId, parsed.value, now, made.value);
      return {
        write: (keyAnswer) => writeSale(ctx.db, { ...sale.row, answer: keyAnswer }),
        answer: (id) => ({ made: saleCreatedView(sale.created(id), ctx.config.publicBaseUrl) }),
      };
    },
    parsed.ok && needsPreparing(parsed.value)
      ? { run: (reference: ProviderReference | null) => prepare(ctx, parsed.value, reference), callsProvider: callsProvider(parsed.value) }
      : undefined,
  );
  // After the sale is written and outside its transaction: a processor that decides over the
  // network gets the card now (CONTRACT §11.2). A replay sends nothing again.
  if (parsed.ok && answer.id !== null) await submitCardSale(ctx, answer.id, parsed.value, cvvOf(ask.body), ask.log);
  return answer;
}

/** What must happen before the write and outside its transaction: a postback URL's check (DNS), a PIX charge, a boleto's registration. */
const needsPreparing = (sale: SaleRequest) => sale.postbackUrl !== null || sale.paymentMethod === 'PIX' || sale.paymentMethod === 'BOLETO';

/**
 * A dynamic PIX charge is a call to the PSP and a boleto a call to its issuer; a static BR Code is
 * ours alone (the PIX port's contract), and a postback URL's check asks DNS, not a provider. A key
 * is claimed only before a provider call: elsewhere a same-key request that prepared too loses at
 * the write, where the key is decided, and replays the answer.
 */
const callsProvider = (sale: SaleRequest) => sale.paymentMethod === 'BOLETO' || (sale.paymentMethod === 'PIX' && sale.pix.expiresInSeconds !== null);

async function prepare(ctx: AppContext, sale: SaleRequest, reference: ProviderReference | null): Promise<Preparation> {
  const url = sale.postbackUrl;
  const problem = url ? await notificationUrlProblem(url, ctx.config.webhookAllowPrivate) : null;
  if (problem) return { ok: false, refusal: refusalOf(problem) };
  return prepareProvider(ctx.db, ctx, sale, reference);
}

const refusalOf = (problem: string) => {
  const error = validationError([{ field: 'postbackUrl', message: problem }]);
  return { code: error.code, message: error.message, details: error.details ?? [] };
};

/** The CVV, which the validated sale never carries (it may be logged or stored): read from the body once, for the processor. */
function cvvOf(body: unknown): string {
  const cvv = (body as { card?: { cvv?: unknown } } | null)?.card?.cvv;
  return typeof cvv === 'string' ? cvv : '';
}
