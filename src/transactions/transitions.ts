import type { Queryable } from '../db/db.ts';
import { CONFLICT, retryOnConflict } from '../db/optimistic.ts';
import { maybeOne, one, raw, run, sql } from '../db/sql.ts';
import type { Posting } from '../domain/ledger.ts';
import { type OutboxTarget, transactionTargets, type WebhookTarget } from '../domain/notification-payloads.ts';
import { type MoveRefs, postingsAt, reserveRelease, salePostings } from '../domain/transaction-postings.ts';
import { applyTransactionEvent, postingKind, type TransactionEvent, type TransactionStatus } from '../domain/transaction-states.ts';
import { postingsCte } from '../ledger/postings.ts';
import { outboxCte } from '../notifications/outbox.ts';
import { type RefundWrite, refundCte } from './refund-cte.ts';
import { saleMoney, withMoneyUpdate } from './sale-money.ts';
import { saleForNotification } from './transaction-view.ts';
import { authenticated_column, type ItemRow, type TransactionRow } from './transactions-repo.ts';

/** Notified when a sale with provider facts held for it moves: they may apply now (CONTRACT §14). */
export const held_facts_channel = 'provider_events_held';

export type MoveResult =
  | { kind: 'moved'; row: TransactionRow; items: ItemRow[]; from: TransactionStatus }
  | { kind: 'noop'; row: TransactionRow; items: ItemRow[] }
  | { kind: 'refused'; row: TransactionRow; items: ItemRow[]; reason: string }
  | { kind: 'not_found' };

/** Everything one move writes, decided in memory from the row as read. */
export interface MovePlan {
  after: TransactionRow;
  /** The event that changes the status; null for a move of money alone (a reserve falling due). */
  event: TransactionEvent | null;
  at: Date;
  /** Ledger postings (CONTRACT §5). */
  postings: Posting[];
  /** Outbox rows (CONTRACT §9). */
  outbox: OutboxTarget[];
  /** The refund row this move creates or settles (CONTRACT §5a), if any. */
  refund: RefundWrite | null;
  /** The provider's references of its movements (CONTRACT §15); none for an operator's word. */
  refs?: MoveRefs;
}

export interface MoveInput {
  row: TransactionRow;
  /** xmin: changes whenever any transaction rewrites the row. */
  version: string;
  items: ItemRow[];
  webhooks: WebhookTarget[];
}

// The row, its items and the seller's TRANSACTION webhooks: all a plan needs, in one read.
const readSql = (id: number) => sql`
  SELECT t.*, t.boleto_due_date::text AS boleto_due_date, t.xmin::text AS row_version, ${raw(authenticated_column)},
    (SELECT coalesce(json_agg(i ORDER BY i.id), '[]') FROM sale_items i WHERE i.transaction_id = t.id) AS items_json,
    (SELECT coalesce(json_agg(json_build_object('id', w.id, 'url', w.url) ORDER BY w.id), '[]') FROM webhooks w
      WHERE w.seller_id = t.seller_id AND w.deleted_at IS NULL AND 'TRANSACTION' = ANY (w.types)) AS webhooks_json
  FROM transactions t WHERE t.id = ${id}`;

/**
 * The one place a transaction changes status. It reads the row, decides the move and everything
 * it writes (postings, outbox rows) in memory, then writes all of it in one statement that applies
 * only if nobody rewrote the row since the read (optimistic concurrency on xmin). A lost race reads
 * again and decides afresh, so two events on one transaction are serialized and a sale is never
 * paid twice. Works inside the caller's transaction or on its own (the statement is atomic).
 * `check` may refuse (answer false) after the read, before anything is written.
 */
export async function moveTransaction(
  q: Queryable,
  id: number,
  event: TransactionEvent,
  at: Date,
  check?: (row: TransactionRow) => boolean,
  refs?: MoveRefs,
): Promise<MoveResult> {
  return retryOnConflict(`transaction ${id}: ${event}`, async () => {
    const input = await readForMove(q, id);
    if (!input) return { kind: 'not_found' } as const;
    const { row: before, items } = input;
    if (check && !check(before)) return { kind: 'refused', row: before, items, reason: 'the caller may not move this transaction' } as const;
    const outcome = applyTransactionEvent(
      { status: before.status, paymentMethod: before.payment_method, lastEvent: before.last_event, refundPending: before.refund_pending > 0 },
      event,
    );
    if (outcome.kind === 'noop') return { kind: 'noop', row: before, items } as const;
    if (outcome.kind === 'refused') return { kind: 'refused', row: before, items, reason: outcome.reason } as const;
    const plan = { ...planMove(input, outcome.to, event, at), refs };
    return (await writeMove(q, input, plan)) !== null ? ({ kind: 'moved', row: plan.after, items, from: before.status } as const) : CONFLICT;
  });
}

/** Releases a PAGO sale's reserve that fell due (CONTRACT §5); false when there was none to release. */
export async function releaseReserve(q: Queryable, id: number, at: Date): Promise<boolean> {
  return retryOnConflict(`transaction ${id}: reserve release`, async () => {
    const input = await readForMove(q, id);
    if (input?.row.status !== 'PAGO') return false;
    const money = reserveRelease(saleMoney(input.row), at);
    if (money.postings.length === 0) return false;
    const plan: MovePlan = { after: withMoneyUpdate(input.row, money.update), event: null, at, postings: money.postings, outbox: [], refund: null };
    return (await writeMove(q, input, plan)) !== null || CONFLICT;
  });
}

/** Pure: the row after the move, its postings and its outbox rows. */
export function planMove(input: MoveInput, to: TransactionStatus, event: TransactionEvent, at: Date): MovePlan {
  const { row: before } = input;
  const moved: TransactionRow = {
    ...before,
    status: to,
    last_event: event,
    updated_at: at,
    completed_at: to === 'PAGO' ? (before.completed_at ?? at) : before.completed_at,
  };
  const kind = postingKind(before.status, to);
  const money = kind ? salePostings(kind, saleMoney(moved), at) : { postings: [], update: {} };
  const after = withMoneyUpdate(moved, money.update);
  return {
    after,
    event,
    at,
    postings: money.postings,
    outbox: transactionTargets(saleForNotification(after, input.items), after.postback_url, input.webhooks),
    // A status refund (the operator's REFUNDED) is a refund of all that was left, settled at once.
    refund:
      kind === 'REFUND'
        ? { kind: 'create', amount: after.refunded_amount - before.refunded_amount, status: 'SUCCEEDED', requestedBy: 'PLATFORM', completedAt: at }
        : null,
  };
}

export async function readForMove(q: Queryable, id: number): Promise<MoveInput | null> {
  const r = await run<TransactionRow & { row_version: string; items_json: ItemRow[]; webhooks_json: WebhookTarget[] }>(q, readSql(id));
  const found = maybeOne(r);
  if (!found) return null;
  const { row_version, items_json, webhooks_json, ...row } = found;
  return { row, version: row_version, items: items_json, webhooks: webhooks_json };
}

/**
 * The whole move in one statement, so it is atomic even outside a transaction: the row (only if it
 * is still the version the plan was made from), the event log, the refund row, the postings with
 * their lines and balance, the outbox rows and the wake-up of the delivery workers. Null when the
 * row changed; otherwise the id of the refund row written (null when none).
 */
export async function writeMove(q: Queryable, input: MoveInput, plan: MovePlan): Promise<{ refundId: number | null } | null> {
  const a = plan.after;
  const move = { sellerId: a.seller_id, transactionId: a.id, cashoutId: null, status: a.status, previous: input.row.status, at: plan.at };
  const r = await run<{ moved: number; refund_id: string | number | null }>(
    q,
    sql`
    WITH moved AS (
      UPDATE transactions SET status = ${a.status}, last_event = ${a.last_event}, updated_at = ${a.updated_at}, completed_at = ${a.completed_at},
        system_fee = ${a.system_fee}, reserve_amount = ${a.reserve_amount}, net_amount = ${a.net_amount}, reserve_held = ${a.reserve_held},
        reserve_release_at = ${a.reserve_release_at}, refunded_amount = ${a.refunded_amount}, refund_pending = ${a.refund_pending},
        med_blocked = ${a.med_blocked}
      WHERE id = ${a.id} AND xmin = ${input.version}::text::xid
      RETURNING id
    ), logged AS (
      INSERT INTO transaction_events (transaction_id, event, from_status, to_status, created_at)
      SELECT id, ${plan.event}::text, ${input.row.status}::text, ${a.status}::text, ${plan.at}::timestamptz FROM moved
      WHERE ${plan.event}::text IS NOT NULL
    ), held AS (
      UPDATE provider_events e SET sale_moved = true FROM moved WHERE e.state = 'held' AND e.transaction_id = moved.id
      RETURNING e.id
    ), held_wake AS (
      SELECT pg_notify(${held_facts_channel}, ${a.id}::text) WHERE EXISTS (SELECT 1 FROM held)
    ), ${refundCte(plan.refund, 'moved', a.seller_id, plan.at)}, ${postingsCte(postingsAt(plan.postings, a.paid_account ?? a.account, refsOf(plan, a)), 'moved')}, ${outboxCte(move, plan.outbox, 'moved')}
    SELECT (SELECT count(*) FROM moved)::int AS moved, (SELECT id FROM refund_row) AS refund_id, (SELECT count(*) FROM woken)::int AS woken,
      (SELECT count(*) FROM held_wake)::int AS held`,
  );
  const written = one(r);
  return written.moved === 1 ? { refundId: written.refund_id === null ? null : Number(written.refund_id) } : null;
}

/** A provider's move names its payment as the sale records it unless its fact named another; an operator's names none. */
function refsOf(plan: MovePlan, row: TransactionRow): MoveRefs {
  if (!plan.refs) return {};
  return { ...plan.refs, payment: plan.refs.payment ?? row.external_transaction_id };
}
