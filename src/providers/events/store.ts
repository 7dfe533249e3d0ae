/** The provider-event store (CONTRACT §14): every fact a provider told the gateway, once. */
import type { Queryable } from '../../db/db.ts';
import { before, maybeOne, one, run, sql } from '../../db/sql.ts';
import type { Fact, FactState, Followup, ProviderFact, ProviderName } from '../../domain/provider-facts.ts';

export type FollowupStatus = 'TO_SEND' | 'SENT' | 'DONE' | 'REFUSED';

export interface StoredEvent {
  id: number;
  provider: ProviderName;
  identity: string;
  kind: Fact['kind'];
  state: FactState;
  reason: string | null;
  fact: Fact;
  transaction_id: number | null;
  refund_id: number | null;
  cashout_id: number | null;
  amount: number | null;
  external_reference: string;
  followup: Followup | null;
  followup_status: FollowupStatus | null;
  followup_detail: string | null;
  followup_key: string | null;
  followup_at: Date | null;
  received_at: Date;
  applied_at: Date | null;
  resolved_at: Date | null;
  note: string | null;
}

/** The amount a fact concerns, in cents, when it names one. */
function amountOf(fact: Fact): number | null {
  return 'amount' in fact && typeof fact.amount === 'number' ? fact.amount : null;
}

/** Stores a fact unless the provider told it before; null when it is a repeat. */
export async function recordOnce(q: Queryable, pf: ProviderFact, at: Date): Promise<StoredEvent | null> {
  const fact = pf.source ? { ...pf.fact, source: pf.source } : pf.fact;
  const r = await run<StoredEvent>(
    q,
    sql`INSERT INTO provider_events (provider, identity, kind, state, fact, amount, external_reference, received_at)
        VALUES (${pf.provider}, ${pf.identity}, ${pf.fact.kind}, 'held', ${JSON.stringify(fact)}::jsonb, ${amountOf(pf.fact)}, ${pf.externalReference}, ${at})
        ON CONFLICT (provider, identity) DO NOTHING RETURNING *`,
  );
  return maybeOne(r);
}

export interface Settled {
  state: FactState;
  reason: string | null;
  transactionId: number | null;
  refundId: number | null;
  cashoutId?: number | null;
  followup: Followup | null;
}

/** What applying the fact made of it; a followup owed is due at once. */
export async function settleEvent(q: Queryable, id: number, s: Settled, at: Date): Promise<void> {
  const followupStatus = s.followup ? 'TO_SEND' : null;
  await run(
    q,
    sql`UPDATE provider_events SET state = ${s.state}, reason = ${s.reason}, transaction_id = coalesce(${s.transactionId}::bigint, transaction_id),
          refund_id = coalesce(${s.refundId}::bigint, refund_id), cashout_id = coalesce(${s.cashoutId ?? null}::bigint, cashout_id), applied_at = CASE WHEN ${s.state}::text = 'held' THEN NULL ELSE ${at}::timestamptz END,
          followup = coalesce(followup, ${s.followup}::text), followup_status = coalesce(followup_status, ${followupStatus}::text),
          followup_at = coalesce(followup_at, CASE WHEN ${followupStatus}::text IS NULL THEN NULL ELSE ${at}::timestamptz END),
          tried_at = ${at}, sale_moved = false
        WHERE id = ${id}`,
  );
}

/** The held facts of a sale, oldest first, locked for this transaction (a concurrent retry skips them). */
export async function heldOf(q: Queryable, transactionId: number): Promise<StoredEvent[]> {
  const r = await run<StoredEvent>(
    q,
    sql`SELECT * FROM provider_events WHERE state = 'held' AND transaction_id = ${transactionId} ORDER BY id FOR UPDATE SKIP LOCKED`,
  );
  return r.rows;
}

/**
 * Sales with held facts: first those that moved since their facts were last tried, then the ones
 * tried longest ago, so facts that can never apply do not starve those that now can.
 */
export async function salesWithHeld(q: Queryable, limit: number): Promise<{ saleId: number; moved: boolean }[]> {
  const r = await run<{ transaction_id: number; moved: boolean }>(
    q,
    sql`SELECT transaction_id, bool_or(sale_moved) AS moved FROM provider_events WHERE state = 'held' AND transaction_id IS NOT NULL
        GROUP BY transaction_id ORDER BY bool_or(sale_moved) DESC, min(tried_at) NULLS FIRST, min(id) LIMIT ${limit}`,
  );
  return r.rows.map((x) => ({ saleId: Number(x.transaction_id), moved: x.moved }));
}

/** Held facts older than `before`: each one a reason for the operator to look. */
export async function heldSince(q: Queryable, before: Date, limit: number): Promise<StoredEvent[]> {
  const r = await run<StoredEvent>(q, sql`SELECT * FROM provider_events WHERE state = 'held' AND received_at < ${before} ORDER BY id LIMIT ${limit}`);
  return r.rows;
}

/** The fact the provider reported under this identity (e.g. the Pix a return concerns). */
export async function findByIdentity(q: Queryable, provider: ProviderName, identity: string): Promise<StoredEvent | null> {
  return maybeOne(await run<StoredEvent>(q, sql`SELECT * FROM provider_events WHERE provider = ${provider} AND identity = ${identity} FOR UPDATE`));
}

/** Followups to call now: never sent, or sent `pollAfterMs` ago without a word on how they ended. */
export async function followupsDue(q: Queryable, now: Date, graceMs: number, pollAfterMs: number, limit: number): Promise<StoredEvent[]> {
  const r = await run<StoredEvent>(
    q,
    sql`SELECT * FROM provider_events
        WHERE (followup_status = 'TO_SEND' AND followup_at < ${new Date(now.getTime() - graceMs)})
           OR (followup_status = 'SENT' AND followup_at < ${new Date(now.getTime() - pollAfterMs)})
        ORDER BY followup_at LIMIT ${limit}`,
  );
  return r.rows;
}

/** What the provider said of a followup; a finished one stays finished. */
export async function setFollowup(q: Queryable, id: number, status: FollowupStatus, detail: string | null, at: Date): Promise<void> {
  await run(
    q,
    sql`UPDATE provider_events SET followup_status = ${status}, followup_detail = coalesce(${detail}, followup_detail), followup_at = ${at}
        WHERE id = ${id} AND followup_status NOT IN ('DONE', 'REFUSED')`,
  );
}

export interface EventFilter {
  state?: FactState;
  provider?: ProviderName;
  beforeId: number | null;
  limit: number;
}

export async function listEvents(q: Queryable, f: EventFilter): Promise<StoredEvent[]> {
  const r = await run<StoredEvent>(
    q,
    sql`SELECT * FROM provider_events
        WHERE (${f.state ?? null}::text IS NULL OR state = ${f.state ?? null}) AND (${f.provider ?? null}::text IS NULL OR provider = ${f.provider ?? null})
          AND ${before('id', f.beforeId)}
        ORDER BY id DESC LIMIT ${f.limit}`,
  );
  return r.rows;
}

export type Resolution = { kind: 'resolved'; event: StoredEvent } | { kind: 'not_found' } | { kind: 'wrong_state'; event: StoredEvent };

/** Marks a needs_operator fact handled, with the operator's note; anything else is left as it is. */
export async function resolveEvent(q: Queryable, id: number, note: string, at: Date): Promise<Resolution> {
  const found = maybeOne(await run<StoredEvent>(q, sql`SELECT * FROM provider_events WHERE id = ${id} FOR UPDATE`));
  if (!found) return { kind: 'not_found' };
  if (found.state !== 'needs_operator' || found.resolved_at !== null) return { kind: 'wrong_state', event: found };
  const r = await run<StoredEvent>(q, sql`UPDATE provider_events SET resolved_at = ${at}, note = ${note} WHERE id = ${id} RETURNING *`);
  return { kind: 'resolved', event: one(r) };
}

/** The gauge of CONTRACT §14: facts per state (needs_operator counts those not yet resolved). */
export async function countByState(q: Queryable): Promise<Record<FactState, number>> {
  const r = await run<{ state: FactState; n: number }>(
    q,
    sql`SELECT state, count(*)::int AS n FROM provider_events WHERE resolved_at IS NULL GROUP BY state`,
  );
  const counts: Record<FactState, number> = { applied: 0, held: 0, needs_operator: 0 };
  for (const row of r.rows) counts[row.state] = Number(row.n);
  return counts;
}

/** The Pix a RETURN followup gives back, as its received fact told it. */
export function unclaimedOf(received: StoredEvent) {
  const fact = received.fact as Extract<Fact, { kind: 'PIX_RECEIVED' }>;
  return { account: fact.account ?? null, endToEndId: fact.endToEndId, amount: fact.amount };
}
