import type { Queryable } from '../db/db.ts';
import { moneyEffectOf } from '../domain/transaction-postings.ts';
import { applyTransactionEvent, postingKind, type TransactionEvent, type TransactionStatus } from '../domain/transaction-states.ts';
import { postingBatch, postingsCte } from '../ledger/postings.ts';
import { NOTIFICATIONS_CHANNEL, outboxInsert, outboxParams, transactionOutboxTargets, type OutboxTarget } from '../notifications/outbox.ts';
import type { Posting } from '../domain/ledger.ts';
import { saleMoney, withMoneyUpdate } from './ledger-effect.ts';
import type { ItemRow, TransactionRow } from './transactions-repo.ts';

export type MoveResult =
  | { kind: 'moved'; row: TransactionRow; items: ItemRow[]; from: TransactionStatus }
  | { kind: 'noop'; row: TransactionRow; items: ItemRow[] }
  | { kind: 'refused'; row: TransactionRow; items: ItemRow[]; reason: string }
  | { kind: 'not_found' };

/** Everything one status change writes, decided in memory from the row as read. */
export interface MovePlan {
  after: TransactionRow;
  event: TransactionEvent;
  at: Date;
  /** Ledger postings (CONTRACT §5). */
  postings: Posting[];
  /** Outbox rows (CONTRACT §9). */
  outbox: OutboxTarget[];
}

interface MoveInput {
  row: TransactionRow;
  /** xmin: changes whenever any transaction rewrites the row. */
  version: string;
  items: ItemRow[];
  webhooks: { id: number; url: string }[];
}

// The row, its items and the seller's TRANSACTION webhooks: all a move needs, in one read.
const read_sql = `
  SELECT t.*, t.boleto_due_date::text AS boleto_due_date, t.xmin::text AS row_version,
    (SELECT coalesce(json_agg(i ORDER BY i.id), '[]') FROM sale_items i WHERE i.transaction_id = t.id) AS items_json,
    (SELECT coalesce(json_agg(json_build_object('id', w.id, 'url', w.url) ORDER BY w.id), '[]') FROM webhooks w
      WHERE w.seller_id = t.seller_id AND w.deleted_at IS NULL AND 'TRANSACTION' = ANY (w.types)) AS webhooks_json
  FROM transactions t WHERE t.id = $1`;

// The whole move in one statement, so it is atomic even outside a transaction: the row (only if
// it is still the version the plan was made from), the event log, the postings with their lines
// and balance, the outbox rows, and the wake-up of the delivery workers.
const write_sql = `
  WITH moved AS (
    UPDATE transactions SET status = $2, last_event = $3, updated_at = $4, completed_at = $5, system_fee = $6,
      reserve_amount = $7, net_amount = $8, reserve_held = $9, reserve_release_at = $10
    WHERE id = $1 AND xmin = $11::text::xid
    RETURNING id
  ), logged AS (
    INSERT INTO transaction_events (transaction_id, event, from_status, to_status, created_at)
    SELECT id, $3, $12, $2, $4 FROM moved
  ), ${postingsCte(13, 'moved')}, outbox AS (${outboxInsert(22, 'moved')}
    RETURNING 1
  ), woken AS (
    SELECT pg_notify('${NOTIFICATIONS_CHANNEL}', '') FROM (SELECT 1 FROM outbox LIMIT 1) AS any_row
  )
  SELECT (SELECT count(*) FROM moved)::int AS moved, (SELECT count(*) FROM woken)::int AS woken`;

// Each retry means another writer changed the row in between; this many in a row is a bug.
const max_attempts = 50;

/**
 * The one place a transaction changes status. It reads the row, decides the move and everything
 * it writes (postings, outbox rows) in memory, then writes all of it in one statement that applies
 * only if nobody rewrote the row since the read (optimistic concurrency on xmin). A lost race reads
 * again and decides afresh, so two events on one transaction are serialized and a sale is never
 * paid twice. Works inside the caller's transaction or on its own (the statement is atomic).
 * `check` may refuse (throw) after the read, before anything is written.
 */
export async function moveTransaction(q: Queryable, id: number, event: TransactionEvent, at: Date,
  check?: (row: TransactionRow) => void): Promise<MoveResult> {
  for (let attempt = 1; attempt <= max_attempts; attempt++) {
    const input = await readForMove(q, id);
    if (!input) return { kind: 'not_found' };
    const { row: before, items } = input;
    check?.(before);
    const outcome = applyTransactionEvent({ status: before.status, paymentMethod: before.payment_method, lastEvent: before.last_event }, event);
    if (outcome.kind === 'noop') return { kind: 'noop', row: before, items };
    if (outcome.kind === 'refused') return { kind: 'refused', row: before, items, reason: outcome.reason };
    const plan = planMove(input, outcome.to, event, at);
    if (await writeMove(q, input, plan)) return { kind: 'moved', row: plan.after, items, from: before.status };
  }
  throw new Error(`transaction ${id}: row kept changing under ${max_attempts} attempts to apply ${event}`);
}

/** Pure: the row after the move, its postings and its outbox rows. */
export function planMove(input: MoveInput, to: TransactionStatus, event: TransactionEvent, at: Date): MovePlan {
  const { row: before } = input;
  const moved: TransactionRow = {
    ...before, status: to, last_event: event, updated_at: at,
    completed_at: to === 'PAGO' ? before.completed_at ?? at : before.completed_at,
  };
  const kind = postingKind(before.status, to);
  const money = kind ? moneyEffectOf(kind, saleMoney(moved), at) : { postings: [], update: {} };
  const after = withMoneyUpdate(moved, money.update);
  return { after, event, at, postings: money.postings, outbox: transactionOutboxTargets(after, input.items, input.webhooks) };
}

async function readForMove(q: Queryable, id: number): Promise<MoveInput | null> {
  const r = await q.query<TransactionRow & { row_version: string; items_json: ItemRow[]; webhooks_json: { id: number; url: string }[] }>(read_sql, [id]);
  const found = r.rows[0];
  if (!found) return null;
  const { row_version, items_json, webhooks_json, ...row } = found;
  return { row, version: row_version, items: items_json, webhooks: webhooks_json };
}

/** False when the row changed since it was read: nothing was written. */
async function writeMove(q: Queryable, input: MoveInput, plan: MovePlan): Promise<boolean> {
  const a = plan.after;
  const r = await q.query<{ moved: number }>(write_sql, [
    a.id, a.status, plan.event, plan.at, a.completed_at, a.system_fee, a.reserve_amount, a.net_amount, a.reserve_held, a.reserve_release_at,
    input.version, input.row.status,
    ...postingBatch(plan.postings).params,
    ...outboxParams({ sellerId: a.seller_id, transactionId: a.id, cashoutId: null, status: a.status, previous: input.row.status, at: plan.at }, plan.outbox),
  ]);
  return r.rows[0]!.moved === 1;
}
