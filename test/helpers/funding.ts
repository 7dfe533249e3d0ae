import { post } from '../../src/ledger/postings.ts';
import type { Gateway } from './gateway.ts';

/** Credits a seller's available balance with a balanced posting, as a paid sale would. */
export async function fund(gw: Gateway, sellerId: number, cents: number): Promise<void> {
  await gw.ctx.db.tx((q) =>
    post(q, {
      kind: 'TEST_FUNDING',
      sellerId,
      lines: [
        { account: 'customer_funds', amount: -cents },
        { account: 'available', amount: cents },
      ],
    }),
  );
}
