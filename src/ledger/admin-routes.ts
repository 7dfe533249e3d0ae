import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { OPERATOR_ERRORS, responses } from '../http/openapi.ts';
import { operatorSecurity, type Router } from '../http/router.ts';
import { verifyLedger } from './verify.ts';

const LedgerReport = Type.Object(
  {
    ok: Type.Boolean({ description: 'true when every invariant holds' }),
    sellersChecked: Type.Integer(),
    mismatches: Type.Array(
      Type.Object(
        { check: Type.String({ description: 'posting_balanced, seller_balance, line_seller, refunded_customer_funds or funds_line' }) },
        { additionalProperties: true, title: 'LedgerMismatch', description: 'the broken invariant and the ids and sums that show it' },
      ),
      { description: 'at most 100 per check' },
    ),
  },
  { title: 'LedgerReport' },
);

export async function ledgerAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/admin/ledger/verify',
    {
      schema: {
        operationId: 'verifyLedger',
        summary: 'Recompute every balance from the journal and check every posting',
        tags: ['operator'],
        security: operatorSecurity,
        response: responses({ 200: LedgerReport }, OPERATOR_ERRORS),
      },
    },
    async () => verifyLedger(ctx.db),
  );
}
