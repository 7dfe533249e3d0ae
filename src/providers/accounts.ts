/**
 * Provider accounts (CONTRACT §11): each configured rail is an account, a connector with its
 * credentials, named by a stable id derived from the connector and the account's own identity at
 * the provider (base URL and client id, merchant account), never from a secret. Sales, refunds and
 * cashouts record the account they were made with; rows written before accounts (or by a process of
 * the release before, during a rolling deploy) have none and belong to the account configured for
 * their connector, which each start records on them.
 */
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/db.ts';
import { raw, run, sql } from '../db/sql.ts';
import type { ProviderName } from '../domain/provider-facts.ts';
import type { Account } from './ports.ts';

/** The id of an account of `connector` known at the provider by `identity` (not secret, e.g. base URL and client id). */
export function accountOf(connector: ProviderName, ...identity: string[]): Account {
  const digest = createHash('sha256').update(identity.join('\n')).digest('hex').slice(0, 12);
  return { id: `${connector}:${digest}`, connector };
}

/** The embedded PSP's accounts (its credentials are new at every start; the account is not). */
export const sandboxAccount = (connector: ProviderName): Account => ({ id: connector === 'sandbox' ? 'sandbox' : `${connector}:sandbox`, connector });

/** The rows made with `account`: its own, and those without one of its connector. */
export const ofAccount = (account: Account, alias = '') => {
  const a = alias ? `${alias}.` : '';
  return sql`(${raw(a)}account = ${account.id} OR (${raw(a)}account IS NULL AND ${raw(a)}provider = ${account.connector}))`;
};

/**
 * Records on the rows without an account the account configured now for their connector (one per
 * capability): sales by method, refunds from their sale, cashouts. Rows of a connector that is not
 * configured stay without one, and fail clearly when anything is asked of them.
 */
export async function recordAccounts(q: Queryable, configured: { pix: Account; card: Account; boleto: Account; payout: Account }): Promise<void> {
  const { pix, card, boleto, payout } = configured;
  await run(
    q,
    sql`UPDATE transactions SET account = CASE
          WHEN payment_method = 'PIX' AND provider = ${pix.connector} THEN ${pix.id}
          WHEN payment_method = 'BOLETO' AND provider = ${boleto.connector} THEN ${boleto.id}
          WHEN payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') AND provider = ${card.connector} THEN ${card.id}
        END
        WHERE account IS NULL AND provider IN (${pix.connector}, ${boleto.connector}, ${card.connector})`,
  );
  await run(
    q,
    sql`UPDATE refunds r SET account = t.account FROM transactions t WHERE r.account IS NULL AND t.id = r.transaction_id AND t.account IS NOT NULL`,
  );
  await run(q, sql`UPDATE cashouts SET account = ${payout.id} WHERE account IS NULL AND provider = ${payout.connector}`);
}

/** Work a provider still owes, on an account this process does not have: nothing will send it. */
export interface StrandedWork {
  account: string | null;
  what: 'cashouts under way' | 'refunds under way' | 'charges to withdraw';
  count: number;
}

/**
 * What was made with an account no longer configured and is not finished (CONTRACT §11): cashouts
 * PENDING or PROCESSING, refunds PENDING, charges of cancelled sales still payable. None of it is
 * ever sent to another account; the operator is told at start (main.ts) and finishes it by hand.
 */
export async function strandedWork(q: Queryable, configured: string[]): Promise<StrandedWork[]> {
  const r = await run<StrandedWork>(
    q,
    sql`SELECT account, what, count(*)::int AS count FROM (
          SELECT account, 'cashouts under way' AS what FROM cashouts WHERE status IN ('PENDING', 'PROCESSING')
          UNION ALL SELECT account, 'refunds under way' FROM refunds WHERE status = 'PENDING'
          UNION ALL SELECT account, 'charges to withdraw' FROM transactions
            WHERE status = 'CANCELADO' AND (pix_charge = 'ACTIVE' OR boleto_charge = 'ACTIVE')
        ) open_work
        WHERE account IS NULL OR NOT (account = ANY(${configured}::text[]))
        GROUP BY account, what ORDER BY account, what`,
  );
  return r.rows;
}
