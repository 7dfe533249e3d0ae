import type { AppContext } from '../context.ts';
import { type CashoutRequest, checkCashoutPolicy, parseCashoutRequest } from '../domain/cashout-request.ts';
import type { CashoutFees } from '../domain/fees.ts';
import { refusalError } from '../domain/result.ts';
import { idempotent, type StoredResponse } from '../http/idempotency.ts';
import { readBalance } from '../ledger/balances.ts';
import { cashoutView } from './cashout-view.ts';
import { type CashoutChannel, cashoutSettings, createCashout } from './create-cashout.ts';

export interface CashoutAsk {
  sellerId: number;
  /** The request body as sent: checked here, in CONTRACT §8's order, inside the idempotent request. */
  body: unknown;
  idempotencyKey: string | undefined;
  channel: CashoutChannel;
  now: Date;
}

const endpoints: Record<CashoutChannel, string> = { API: 'POST /api/public/cashout', PANEL: 'POST /painel/saques' };

/**
 * A cashout asked through the API or the panel: one write path. The body is parsed inside the
 * idempotent request, so that a 400 is stored and replayed like a 422.
 */
export function requestCashout(ctx: AppContext, ask: CashoutAsk): Promise<StoredResponse> {
  return idempotent(
    {
      db: ctx.db,
      fingerprintKey: ctx.requestFingerprintKey,
      sellerId: ask.sellerId,
      endpoint: endpoints[ask.channel],
      key: ask.idempotencyKey,
      body: ask.body,
      now: ask.now,
    },
    async (q) => {
      const parsed = parseCashoutRequest(ask.body);
      if (!parsed.ok) throw refusalError(parsed.refusal);
      return { status: 201, body: cashoutView(await createCashout(q, ask.sellerId, parsed.value, ask.now, ask.channel)) };
    },
  );
}

export interface CashoutPreview {
  request: CashoutRequest;
  fees: CashoutFees;
  available: number;
}

/** What a cashout would cost now: CONTRACT §8's checks but the balance (a refusal is thrown as the same error). */
export async function quoteCashout(ctx: AppContext, sellerId: number, body: unknown, channel: CashoutChannel) {
  const parsed = parseCashoutRequest(body);
  if (!parsed.ok) throw refusalError(parsed.refusal);
  const checked = checkCashoutPolicy(parsed.value, await cashoutSettings(ctx.db, sellerId, channel));
  if (!checked.ok) throw refusalError(checked.refusal);
  return { request: parsed.value, fees: checked.value };
}

/** The quote before it is confirmed, with the balance as it is now (the cashout itself checks it again, atomically). */
export async function previewCashout(ctx: AppContext, sellerId: number, body: unknown, channel: CashoutChannel): Promise<CashoutPreview> {
  const quote = await quoteCashout(ctx, sellerId, body, channel);
  const { available } = await readBalance(ctx.db, sellerId);
  if (quote.request.amount > available)
    throw refusalError({ code: 'INSUFFICIENT_BALANCE', message: 'The available balance does not cover this cashout' });
  return { ...quote, available };
}
