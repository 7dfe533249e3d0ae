import type { Queryable } from '../db/db.ts';
import { CONFLICT, retryOnConflict } from '../db/optimistic.ts';
import { maybeOne, one, run, sql } from '../db/sql.ts';
import { cashoutMovePosting } from '../domain/cashout-postings.ts';
import { applyCashoutEvent, CASHOUT_FINAL_STATUSES, type CashoutEvent, type CashoutStatus } from '../domain/cashout-states.ts';
import { atAccount, type Posting } from '../domain/ledger.ts';
import { cashoutTargets, type OutboxTarget, type WebhookTarget } from '../domain/notification-payloads.ts';
import { postingsCte } from '../ledger/postings.ts';
import { outboxCte } from '../notifications/outbox.ts';
import { cashoutForNotification } from './cashout-view.ts';
import { type CashoutRow, cashoutMoney } from './cashouts-repo.ts';
import { checkAfterMove } from './payout-schedule.ts';

export type CashoutMoveResult =
  | { kind: 'moved'; row: CashoutRow; from: CashoutStatus }
  | { kind: 'noop'; row: CashoutRow }
  | { kind: 'refused'; row: CashoutRow; reason: string }
  | { kind: 'not_found' };

/** What the payout provider said of the cashout: its id for the payout, its words, why it was not made. */
export interface ProviderUpdate {
  externalId: string | null;
  providerData: Record<string, unknown>;
  failureReason?: string | null;
  /** When the payout job next asks the PSP about it (undefined: as the move implies). */
  nextCheckAt?: Date | null;
}

/** Everything one cashout move writes, decided in memory from the row as read. */
export interface CashoutMovePlan {
  after: CashoutRow;
  event: CashoutEvent;
  at: Date;
  postings: Posting[];
  outbox: OutboxTarget[];
}

interface CashoutMoveInput {
  row: CashoutRow;
  /** xmin: changes whenever any transaction rewrites the row. */
  version: string;
  seller: { name: string; email: string };
  webhooks: WebhookTarget[];
}

// The row, its seller and the seller's WITHDRAWAL webhooks: all a plan needs, in one read.
const readSql = (id: number) => sql`
  SELECT c.*, c.xmin::text AS row_version, s.name AS seller_name, s.email AS seller_email,
    (SELECT coalesce(json_agg(json_build_object('id', w.id, 'url', w.url) ORDER BY w.id), '[]') FROM webhooks w
      WHERE w.seller_id = c.seller_id AND w.deleted_at IS NULL AND 'WITHDRAWAL' = ANY (w.types)) AS webhooks_json
  FROM cashouts c JOIN sellers s ON s.id = c.seller_id WHERE c.id = ${id}`;

/**
 * The one place a cashout changes status, in the shape of a transaction move: one read, a pure
 * plan (postings and outbox rows), one statement that applies only if the row is still the
 * version read (xmin); a lost race reads again and decides afresh.
 */
export async function moveCashout(q: Queryable, id: number, event: CashoutEvent, at: Date, provider?: ProviderUpdate): Promise<CashoutMoveResult> {
  return retryOnConflict(`cashout ${id}: ${event}`, async () => {
    const input = await readForMove(q, id);
    if (!input) return { kind: 'not_found' } as const;
    const before = input.row;
    const outcome = applyCashoutEvent({ status: before.status, lastEvent: before.last_event }, event);
    if (outcome.kind === 'noop') return { kind: 'noop', row: before } as const;
    if (outcome.kind === 'refused') return { kind: 'refused', row: before, reason: outcome.reason } as const;
    const plan = planCashoutMove(input, outcome.to, event, at, provider);
    return (await writeMove(q, input, plan)) ? ({ kind: 'moved', row: plan.after, from: before.status } as const) : CONFLICT;
  });
}

/** Pure: the row after the move, its posting (CONTRACT §5) and its outbox rows (CONTRACT §9). */
export function planCashoutMove(
  input: CashoutMoveInput,
  to: CashoutStatus,
  event: CashoutEvent,
  at: Date,
  provider?: ProviderUpdate,
): CashoutMovePlan {
  const before = input.row;
  const after: CashoutRow = {
    ...before,
    status: to,
    last_event: event,
    updated_at: at,
    processed_at: (CASHOUT_FINAL_STATUSES as readonly string[]).includes(to) ? at : before.processed_at,
    external_id: provider?.externalId ?? before.external_id,
    provider_data: provider?.providerData ?? before.provider_data,
    failure_reason: to === 'REJECTED' ? (provider?.failureReason ?? before.failure_reason) : before.failure_reason,
    next_check_at: checkAfterMove(before.next_check_at, to, at, provider?.nextCheckAt),
  };
  const made = cashoutMovePosting(cashoutMoney(after), to);
  const posting = made && atAccount(made, { account: after.account, reference: payoutReference(after) });
  return {
    after,
    event,
    at,
    postings: posting ? [posting] : [],
    outbox: cashoutTargets(cashoutForNotification(after, input.seller), input.webhooks),
  };
}

async function readForMove(q: Queryable, id: number): Promise<CashoutMoveInput | null> {
  const r = await run<CashoutRow & { row_version: string; seller_name: string; seller_email: string; webhooks_json: WebhookTarget[] }>(
    q,
    readSql(id),
  );
  const found = maybeOne(r);
  if (!found) return null;
  const { row_version, seller_name, seller_email, webhooks_json, ...row } = found;
  return { row, version: row_version, seller: { name: seller_name, email: seller_email }, webhooks: webhooks_json };
}

/** The whole move in one statement (see moveTransaction); false when the row changed since read. */
async function writeMove(q: Queryable, input: CashoutMoveInput, plan: CashoutMovePlan): Promise<boolean> {
  const a = plan.after;
  const move = { sellerId: a.seller_id, transactionId: null, cashoutId: a.id, status: a.status, previous: input.row.status, at: plan.at };
  const r = await run<{ moved: number }>(
    q,
    sql`
    WITH moved AS (
      UPDATE cashouts SET status = ${a.status}, last_event = ${a.last_event}, updated_at = ${a.updated_at}, processed_at = ${a.processed_at},
        external_id = ${a.external_id}, provider_data = ${a.provider_data === null ? null : JSON.stringify(a.provider_data)}::jsonb,
        failure_reason = ${a.failure_reason}, next_check_at = ${a.next_check_at}
      WHERE id = ${a.id} AND xmin = ${input.version}::text::xid
      RETURNING id
    ), logged AS (
      INSERT INTO cashout_events (cashout_id, event, from_status, to_status, created_at)
      SELECT id, ${plan.event}::text, ${input.row.status}::text, ${a.status}::text, ${plan.at}::timestamptz FROM moved
    ), ${postingsCte(plan.postings, 'moved')}, ${outboxCte(move, plan.outbox, 'moved')}
    SELECT (SELECT count(*) FROM moved)::int AS moved, (SELECT count(*) FROM woken)::int AS woken`,
  );
  return one(r).moved === 1;
}

/** The payout's idEnvio as its provider's record names it; none for a cashout no provider sent. */
const payoutReference = (row: CashoutRow): string | null => {
  const idEnvio = row.provider_data?.idEnvio;
  return typeof idEnvio === 'string' ? idEnvio : null;
};
