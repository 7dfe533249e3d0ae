import type { AppContext } from '../context.ts';
import type { Router } from '../http/router.ts';
import { createSellerRoute } from './admin-routes/create-seller.ts';
import { createSellerKeyRoute } from './admin-routes/create-seller-key.ts';
import { getSellerRoute } from './admin-routes/get-seller.ts';
import { revokeSellerKeyRoute } from './admin-routes/revoke-seller-key.ts';
import { updateSellerRoute } from './admin-routes/update-seller.ts';

/** The operator's sellers and their keys, one file per operation, registered in the order the OpenAPI document lists them. */
export async function sellerAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  createSellerRoute(app, ctx);
  getSellerRoute(app, ctx);
  updateSellerRoute(app, ctx);
  createSellerKeyRoute(app, ctx);
  revokeSellerKeyRoute(app, ctx);
}
