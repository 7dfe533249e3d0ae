/**
 * 3-D Secure, the shopper's side (CONTRACT §11.2): what the gateway's pages do with a sale's token.
 * The page forwards the shopper to its issuer as the processor said; the return asks the processor
 * for the result once (the first return claims it), applies its word through the one apply step and
 * sends the shopper back to the seller. A token is dead once its sale leaves PENDENTE.
 */
import type { AppContext } from '../context.ts';
import { maybeOne, run, sql } from '../db/sql.ts';
import type { TransactionStatus } from '../domain/transaction-states.ts';
import { applyProviderFact } from '../providers/events/apply-fact.ts';
import type { ShopperAction } from '../providers/ports.ts';
import { portOf } from '../providers/registry.ts';

/** 24 random bytes in base64url: anything else is not a token, and is not looked up. */
const token_shape = /^[A-Za-z0-9_-]{32}$/;

interface Authentication {
  sale_id: number;
  return_url: string;
  expires_at: Date;
  action: ShopperAction | null;
  returned_at: Date | null;
  result: 'AUTHENTICATED' | 'FAILED' | 'NOT_ASKED' | null;
  status: TransactionStatus;
  account: string | null;
  provider: string;
  provider_data: Record<string, unknown> | null;
}

async function authenticationOf(ctx: AppContext, token: string): Promise<Authentication | null> {
  if (!token_shape.test(token)) return null;
  return maybeOne(
    await run<Authentication>(
      ctx.db,
      sql`SELECT a.transaction_id AS sale_id, a.return_url, a.expires_at, a.action, a.returned_at, a.result,
            t.status, t.account, t.provider, t.provider_data
          FROM card_authentications a JOIN transactions t ON t.id = a.transaction_id WHERE a.token = ${token}`,
    ),
  );
}

/** The seller's page, with the sale and its status as the shopper leaves us. */
export function sellerReturn(a: { return_url: string; sale_id: number }, status: TransactionStatus): string {
  const url = new URL(a.return_url);
  url.searchParams.set('saleId', String(a.sale_id));
  url.searchParams.set('status', status);
  return url.toString();
}

export type Forward =
  | { kind: 'issuer'; action: ShopperAction }
  /** The processor asked nothing of the shopper: straight back to the seller. */
  | { kind: 'back'; url: string }
  /** Not a token, or a dead one (the sale moved on, or it expired). */
  | { kind: 'gone' }
  /** The processor has not answered yet (a request still under way). */
  | { kind: 'wait' };

/** GET /checkout/3ds/{token}: where the shopper goes now. */
export async function forward(ctx: AppContext, token: string): Promise<Forward> {
  const a = await authenticationOf(ctx, token);
  if (!a) return { kind: 'gone' };
  if (a.result === 'NOT_ASKED') return { kind: 'back', url: sellerReturn(a, a.status) };
  if (a.status !== 'PENDENTE' || a.returned_at !== null || a.expires_at <= ctx.clock.now()) return { kind: 'gone' };
  return a.action ? { kind: 'issuer', action: a.action } : { kind: 'wait' };
}

export type Returned = { kind: 'back'; url: string } | { kind: 'gone' } | { kind: 'no-result' };

/**
 * GET|POST /checkout/3ds/{token}/return: the shopper is back from its issuer. The first return asks
 * the processor (never a second time for one sale); any later one, or one for a sale that already
 * moved (its AUTHORISATION notification came first), only sends the shopper back.
 */
export async function shopperReturned(
  ctx: AppContext,
  token: string,
  redirectResult: string | null,
  log: { warn(o: object, m: string): void },
): Promise<Returned> {
  const a = await authenticationOf(ctx, token);
  if (!a) return { kind: 'gone' };
  if (a.returned_at !== null || a.status !== 'PENDENTE') {
    if (a.result === null && a.status !== 'PENDENTE') await settle(ctx, a.sale_id, a.status);
    return { kind: 'back', url: sellerReturn(a, a.status) };
  }
  if (redirectResult === null || redirectResult === '' || redirectResult.length > 20_000) return { kind: 'no-result' };
  const claimed = await run(
    ctx.db,
    sql`UPDATE card_authentications SET returned_at = ${ctx.clock.now()} WHERE transaction_id = ${a.sale_id} AND returned_at IS NULL RETURNING 1`,
  );
  if (claimed.rows.length === 0) return { kind: 'back', url: sellerReturn(a, await statusOf(ctx, a.sale_id)) };
  const processor = portOf(ctx.providers, 'CARD', { account: a.account, provider: a.provider as never });
  const facts = await processor.details({ saleId: a.sale_id, redirectResult, providerData: a.provider_data });
  for (const fact of facts) {
    await applyProviderFact(ctx, fact).catch((failure: unknown) => {
      // Adyen's AUTHORISATION notification tells it again; an abandoned sale is cancelled by the expiry job.
      log.warn({ err: failure, saleId: a.sale_id }, 'card authentication result not recorded');
    });
  }
  const status = await statusOf(ctx, a.sale_id);
  // A return with nothing refused leaves the sale to the processor's next word (the sandbox's autopilot);
  // a processor that did not answer (its notification will) has not said whether the shopper passed.
  const unanswered = facts.some((f) => f.fact.kind === 'CARD_ANSWER' && f.fact.result === 'PENDING');
  if (!unanswered) await settle(ctx, a.sale_id, status, facts.length === 0 ? 'AUTHENTICATED' : undefined);
  return { kind: 'back', url: sellerReturn(a, status) };
}

async function statusOf(ctx: AppContext, saleId: number): Promise<TransactionStatus> {
  const row = await maybeOne(await run<{ status: TransactionStatus }>(ctx.db, sql`SELECT status FROM transactions WHERE id = ${saleId}`));
  return row?.status ?? 'PENDENTE';
}

const authenticated_statuses: readonly TransactionStatus[] = ['EM_PROCESSAMENTO', 'PAGO', 'CHARGEBACK', 'ESTORNADO'];
const failed_statuses: readonly TransactionStatus[] = ['RECUSADO', 'FALHA', 'CANCELADO'];

/** Whether the shopper was authenticated, as far as the sale's status tells. */
async function settle(ctx: AppContext, saleId: number, status: TransactionStatus, otherwise?: 'AUTHENTICATED'): Promise<void> {
  const result = authenticated_statuses.includes(status) ? 'AUTHENTICATED' : failed_statuses.includes(status) ? 'FAILED' : (otherwise ?? null);
  if (result === null) return;
  await run(ctx.db, sql`UPDATE card_authentications SET result = ${result} WHERE transaction_id = ${saleId} AND result IS NULL`);
}

/** A sale of `account` (the sandbox card processor's) whose shopper may still authenticate, by its token. */
export async function sandboxSale(ctx: AppContext, token: string, account: string): Promise<{ amount: number; returnUrl: string } | null> {
  const a = await authenticationOf(ctx, token);
  if (!a || a.account !== account || a.action === null || a.status !== 'PENDENTE' || a.returned_at !== null) return null;
  const row = await maybeOne(await run<{ amount: number }>(ctx.db, sql`SELECT amount FROM transactions WHERE id = ${a.sale_id}`));
  return row && { amount: Number(row.amount), returnUrl: a.return_url };
}
