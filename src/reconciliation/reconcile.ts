/**
 * One account's day reconciled (CONTRACT §15): its record read (every reader of the account, page
 * by page, into the store), the devoluções of older Pix the journal names read one by one, the
 * record's fees posted, the day matched, and the outcome kept. A record the provider has not
 * published yet leaves the day `pending`; one that cannot be read leaves it `unreadable`; either is
 * tried again later. Nothing here moves a seller's money.
 */
import type { AppContext } from '../context.ts';
import type { Db, Queryable } from '../db/db.ts';
import { run, sql } from '../db/sql.ts';
import type { Account } from '../providers/ports.ts';
import { type ProviderMovement, RecordNotReady, type RecordReader } from '../providers/record.ts';
import { keepMovements } from '../providers/record-store.ts';
import { dayWindow, sideWindows } from './days.ts';
import { type DayTally, type MatchWindows, matchDay } from './matcher.ts';
import { postFees } from './record-store.ts';

/** An account as reconciliation sees it: how to read its record. */
export interface AccountRecord {
  account: Account;
  readers: RecordReader[];
  /** The devoluções of these Pix, for a record that lists them under the day of their Pix. */
  devolucoesOf?: (endToEndIds: string[]) => Promise<ProviderMovement[]>;
  /** The balance the provider reports now, in cents; null when it reports none. */
  balance?: () => Promise<number | null>;
  /** How much later than the journal the provider may book a movement (a card processor settles in batches). */
  lateByMs: number;
}

export type DayState = 'matched' | 'mismatched' | 'pending' | 'unreadable';

export interface DayOutcome {
  state: DayState;
  tally: DayTally | null;
  error: string | null;
}

// A day that could not be read is tried again after this, doubling to the cap.
const first_retry_ms = 5 * 60_000;
const max_retry_ms = 6 * 60 * 60_000;
const looked_up_batch = 100;
const max_looked_up = 10_000;
const day_read_timeout_ms = 600_000;

export async function reconcileDay(ctx: AppContext, rec: AccountRecord, day: string): Promise<DayOutcome> {
  const sides = sideWindows(day, rec.lateByMs);
  const windows: MatchWindows = { day: dayWindow(day), ...sides };
  let outcome: DayOutcome;
  let balances: { provider: number | null; ledger: number | null } = { provider: null, ledger: null };
  try {
    for (const read of rec.readers) {
      for await (const page of read(sides.provider)) await keepMovements(ctx.db, rec.account.id, page);
    }
    if (rec.devolucoesOf) await readOlderDevolucoes(ctx.db, rec, windows);
    await postFees(ctx.db, rec.account.id, sides.provider);
    // The balance is shown beside the day, not matched: one the provider will not give leaves it unknown, the day read.
    const provider = rec.balance ? await rec.balance().catch(() => null) : null;
    balances = { provider, ledger: await ledgerBalance(ctx.db, rec.account.id) };
    const tally = await matchDay(ctx.db, rec.account, day, windows);
    outcome = { state: tally.findingCount === 0 ? 'matched' : 'mismatched', tally, error: null };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    outcome = { state: error instanceof RecordNotReady ? 'pending' : 'unreadable', tally: null, error: message };
  }
  await keepOutcome(ctx.db, rec.account, day, outcome, balances, ctx.clock.now());
  return outcome;
}

/**
 * The journal's devoluções of the day whose Pix was received another day (a refund a week after the
 * sale): the record lists them under their Pix, so those Pix are read one by one.
 */
async function readOlderDevolucoes(db: Db, rec: AccountRecord, w: MatchWindows): Promise<void> {
  // It reads the day's journal of the account: a busy day takes longer than the usual statement limit.
  const r = await db.tx(
    (q) =>
      run<{ e2e: string }>(
        q,
        sql`SELECT DISTINCT t.pix_end_to_end_id AS e2e
        FROM journal_lines j JOIN postings ps ON ps.id = j.posting_id JOIN transactions t ON t.id = ps.transaction_id
        WHERE j.account = ${`customer_funds:${rec.account.id}`} AND j.reference IS NOT NULL
          AND j.created_at >= ${w.ledger.from} AND j.created_at < ${w.ledger.to}
          AND ps.kind IN ('REFUND_SUCCEEDED', 'MED_LOST') AND t.pix_end_to_end_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM provider_movements m WHERE m.account = ${rec.account.id} AND m.reference = j.reference)
        LIMIT ${max_looked_up}`,
      ),
    { timeoutMs: day_read_timeout_ms },
  );
  const ids = r.rows.map((x) => x.e2e);
  for (let i = 0; i < ids.length; i += looked_up_batch) {
    await keepMovements(db, rec.account.id, (await rec.devolucoesOf?.(ids.slice(i, i + looked_up_batch))) ?? []);
  }
}

/** What the platform holds at the account now, as the journal says: the funds' lines, sign turned. */
async function ledgerBalance(q: Queryable, account: string): Promise<number> {
  const r = await run<{ total: string }>(
    q,
    sql`SELECT coalesce(-sum(amount), 0)::bigint AS total FROM journal_lines WHERE account = ${`customer_funds:${account}`}`,
  );
  return Number(r.rows[0]?.total ?? 0);
}

async function keepOutcome(
  q: Queryable,
  account: Account,
  day: string,
  o: DayOutcome,
  balances: { provider: number | null; ledger: number | null },
  now: Date,
): Promise<void> {
  const t = o.tally;
  const again = o.state === 'pending' || o.state === 'unreadable';
  await run(
    q,
    sql`INSERT INTO reconciliation_days AS d (account, day, connector, state, provider_movements, ledger_movements, matched,
          provider_total, ledger_total, provider_balance, ledger_balance, findings, finding_count, error, tries, next_try_at, reconciled_at)
        VALUES (${account.id}, ${day}::date, ${account.connector}, ${o.state}, ${t?.providerMovements ?? 0}, ${t?.ledgerMovements ?? 0},
          ${t?.matched ?? 0}, ${t?.providerTotal ?? 0}, ${t?.ledgerTotal ?? 0}, ${balances.provider}, ${balances.ledger},
          ${JSON.stringify(t?.findings ?? [])}::jsonb, ${t?.findingCount ?? 0}, ${o.error}, ${again ? 1 : 0},
          CASE WHEN ${again}::boolean THEN ${now}::timestamptz + make_interval(secs => ${first_retry_ms / 1000}) END, ${now})
        ON CONFLICT (day, account) DO UPDATE SET state = EXCLUDED.state, connector = EXCLUDED.connector,
          provider_movements = EXCLUDED.provider_movements, ledger_movements = EXCLUDED.ledger_movements, matched = EXCLUDED.matched,
          provider_total = EXCLUDED.provider_total, ledger_total = EXCLUDED.ledger_total,
          provider_balance = coalesce(EXCLUDED.provider_balance, d.provider_balance), ledger_balance = coalesce(EXCLUDED.ledger_balance, d.ledger_balance),
          findings = EXCLUDED.findings, finding_count = EXCLUDED.finding_count, error = EXCLUDED.error,
          tries = CASE WHEN ${again}::boolean THEN d.tries + 1 ELSE 0 END,
          next_try_at = CASE WHEN ${again}::boolean
            THEN ${now}::timestamptz + make_interval(secs => least(${first_retry_ms / 1000} * power(2, d.tries), ${max_retry_ms / 1000})) END,
          reconciled_at = EXCLUDED.reconciled_at`,
  );
}
