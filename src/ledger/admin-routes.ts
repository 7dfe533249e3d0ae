import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { errorResponses, operatorSecurity, type Router } from '../http/router.ts';
import { verifyLedger } from './verify.ts';

export async function ledgerAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/admin/ledger/verify',
    {
      schema: {
        summary: 'Recompute every balance from the journal and check every posting',
        tags: ['operator'],
        security: operatorSecurity,
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            sellersChecked: Type.Integer(),
            mismatches: Type.Array(Type.Object({ check: Type.String() }, { additionalProperties: true })),
          }),
          ...errorResponses,
        },
      },
    },
    async () => verifyLedger(ctx.db),
  );
}
