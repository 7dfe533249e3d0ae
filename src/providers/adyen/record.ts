/**
 * An Adyen account's own record (CONTRACT §15): the movements of the settlement reports downloaded so
 * far, kept in provider_movements, read per window page by page. Adyen publishes a batch's report
 * days after its payments: a window its reports do not reach yet is not ready (the day stays
 * pending), never read as empty.
 */
import type { Queryable } from '../../db/db.ts';
import { run, sql } from '../../db/sql.ts';
import { type MovementKind, type ProviderMovement, RecordNotReady, type RecordReader } from '../record.ts';

interface MovementRow {
  id: string;
  kind: MovementKind;
  reference: string;
  amount: string | number;
  at: Date | string;
  detail: Record<string, unknown> | null;
}

/**
 * The movements kept for `account`, keyset-paged on (at, id). RecordNotReady until a fetched report
 * reaches `window.to`, and while a report Adyen announced is not read yet (failed or waiting): its
 * movements are unknown, and a record without them would show every one of them as missing.
 */
export function adyenRecord(db: Queryable, account: string, pageSize = 1000): RecordReader {
  return async function* read(window) {
    const reach = await run<{ latest: Date | null; unread: string | null }>(
      db,
      sql`SELECT max(latest_at) FILTER (WHERE state = 'fetched') AS latest, min(file_name) FILTER (WHERE state <> 'fetched') AS unread
          FROM settlement_reports WHERE account = ${account}`,
    );
    const { latest = null, unread = null } = reach.rows[0] ?? {};
    if (unread !== null) throw new RecordNotReady(`Adyen's settlement report ${unread} of account ${account} is not read yet`);
    if (latest === null || new Date(latest) < window.to)
      throw new RecordNotReady(
        `Adyen has not reported account ${account} up to ${window.to.toISOString()} yet (its settlement reports reach ${latest === null ? 'nothing' : new Date(latest).toISOString()})`,
      );
    yield* movementPages(db, account, window, pageSize);
  };
}

/** The kept movements of `account` in [from, to), page after page. */
export async function* movementPages(db: Queryable, account: string, window: { from: Date; to: Date }, pageSize: number) {
  let after: { at: Date; id: string } | null = null;
  for (;;) {
    const keyset = after === null ? sql`TRUE` : sql`(at, id) > (${after.at}::timestamptz, ${after.id}::text)`;
    const r = await run<MovementRow>(
      db,
      sql`SELECT id, kind, reference, amount, at, detail FROM provider_movements
          WHERE account = ${account} AND at >= ${window.from} AND at < ${window.to} AND ${keyset}
          ORDER BY at, id LIMIT ${pageSize}`,
    );
    if (r.rows.length === 0) return;
    const page: ProviderMovement[] = r.rows.map((row) => ({
      id: row.id,
      kind: row.kind,
      reference: row.reference,
      amount: Number(row.amount),
      at: new Date(row.at),
      ...(row.detail ? { detail: row.detail } : {}),
    }));
    yield page;
    if (r.rows.length < pageSize) return;
    const last = page[page.length - 1]!;
    after = { at: last.at, id: last.id };
  }
}
