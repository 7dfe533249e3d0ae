import type { AppContext } from '../../context.ts';
import { existing, OPERATOR_ERRORS, responses } from '../../http/openapi.ts';
import { iso, PathId, type Router } from '../../http/router.ts';
import { listKeys } from '../sellers-repo.ts';
import { common, existingSeller, SellerWithKeys, sellerView } from './common.ts';

export function getSellerRoute(app: Router, ctx: AppContext): void {
  app.get(
    '/admin/sellers/:id',
    {
      schema: {
        ...common,
        operationId: 'getSeller',
        summary: 'Read a seller, its settings and key list',
        params: PathId,
        response: responses({ 200: SellerWithKeys }, [...OPERATOR_ERRORS, ...existing('seller')]),
      },
    },
    async (request) => {
      const seller = await existingSeller(ctx, request.params.id);
      const keys = await listKeys(ctx.db, seller.id);
      return {
        ...sellerView(seller),
        keys: keys.map((k) => ({ publicKey: k.publicKey, createdAt: k.createdAt.toISOString(), revokedAt: iso(k.revokedAt) })),
      };
    },
  );
}
