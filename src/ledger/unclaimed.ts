/**
 * Money a sale of ours cannot take (CONTRACT §11.1, §15): a second Pix, another amount. It arrived
 * at the PSP's account, so the account's funds rise and the platform owes it to the payer
 * (unclaimed_funds) until the Pix is returned whole, when both fall back. Neither posting is a
 * seller's; each names the provider's reference (the Pix's endToEndId, the return's rtrId), so the
 * PSP's record of both matches the journal. Each is written once, whoever tells it first.
 */
import type { Queryable } from '../db/db.ts';
import { run, sql } from '../db/sql.ts';
import { type Account, fundsOf } from '../domain/ledger.ts';
import { postingsCte } from './postings.ts';

interface Unclaimed {
  account: string | null;
  endToEndId: string;
  amount: number;
}

/** The Pix received, owed back to its payer. */
export async function unclaimedReceived(q: Queryable, u: Unclaimed): Promise<void> {
  await platformPosting(q, 'PIX_UNCLAIMED', u, [
    [fundsOf(u.account), -u.amount, u.endToEndId],
    ['unclaimed_funds', u.amount, u.endToEndId],
  ]);
}

/** The Pix returned whole (its devolução DEVOLVIDO): nothing owed any more. */
export async function unclaimedReturned(q: Queryable, u: Unclaimed, returnId: string | null): Promise<void> {
  await platformPosting(q, 'PIX_RETURNED', u, [
    ['unclaimed_funds', -u.amount, u.endToEndId],
    [fundsOf(u.account), u.amount, returnId],
  ]);
}

/** Written unless a line of the same sign on unclaimed_funds already names this Pix. */
async function platformPosting(q: Queryable, kind: string, u: Unclaimed, lines: [Account, number, string | null][]): Promise<void> {
  if (!Number.isSafeInteger(u.amount) || u.amount <= 0) return;
  const owedSign = Math.sign(lines.find(([account]) => account === 'unclaimed_funds')![1]);
  const posting = { kind, sellerId: null, lines: lines.map(([account, amount, reference]) => ({ account, amount, reference })) };
  await run(
    q,
    sql`WITH due AS (
          SELECT 1 WHERE NOT EXISTS (
            SELECT 1 FROM journal_lines WHERE account = 'unclaimed_funds' AND reference = ${u.endToEndId} AND sign(amount) = ${owedSign})
        ), ${postingsCte([posting], 'due')}
        SELECT count(*) FROM posting_ids`,
  );
}
