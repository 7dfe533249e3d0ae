import type { AppContext } from '../context.ts';
import { type CashoutRequest, checkCashoutPolicy, parseCashoutRequest } from '../domain/cashout-request.ts';
import type { CashoutFees } from '../domain/fees.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
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
      if (!parsed.ok) return parsed;
      const made = await createCashout(q, ask.sellerId, parsed.value, ask.now, ctx.providers.rail('PAYOUT').account, ask.channel);
      return made.ok ? { made: cashoutView(made.value) } : made;
    },
  );
}

export interface CashoutPreview {
  request: CashoutRequest;
  fees: CashoutFees;
  available: number;
}

/** What a cashout would cost now: CONTRACT §8's checks but the balance, refused as the cashout itself would be. */
export async function quoteCashout(
  ctx: AppContext,
  sellerId: number,
  body: unknown,
  channel: CashoutChannel,
): Promise<Result<{ request: CashoutRequest; fees: CashoutFees }>> {
  const parsed = parseCashoutRequest(body);
  if (!parsed.ok) return parsed;
  const checked = checkCashoutPolicy(parsed.value, await cashoutSettings(ctx.db, sellerId, channel));
  if (!checked.ok) return checked;
  return ok({ request: parsed.value, fees: checked.value });
}

/** The quote before it is confirmed, with the balance as it is now (the cashout itself checks it again, atomically). */
export async function previewCashout(ctx: AppContext, sellerId: number, body: unknown, channel: CashoutChannel): Promise<Result<CashoutPreview>> {
  const quote = await quoteCashout(ctx, sellerId, body, channel);
  if (!quote.ok) return quote;
  const { available } = await readBalance(ctx.db, sellerId);
  if (quote.value.request.amount > available) return refuse('INSUFFICIENT_BALANCE', 'The available balance does not cover this cashout');
  return ok({ ...quote.value, available });
}
