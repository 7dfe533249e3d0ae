import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { ApiError } from '../domain/errors.ts';
import { parsePathId } from '../http/ids.ts';
import { BODY_ERRORS, existing, NO_FIELDS, OPERATOR_ERRORS, responses } from '../http/openapi.ts';
import { NoBody, operatorSecurity, PathId, type Router } from '../http/router.ts';
import { findSeller } from '../sellers/sellers-repo.ts';
import { createInvite } from './accounts.ts';

/** `POST /admin/sellers/{id}/panel-invites` (CONTRACT §12): a one-use link, valid 72 h, where the seller sets a password. */
export async function panelAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/admin/sellers/:id/panel-invites',
    {
      schema: {
        operationId: 'createPanelInvite',
        summary: "Invite a seller to the panel: a one-use link (72 h) to set the account's password",
        tags: ['operator'],
        security: operatorSecurity,
        params: PathId,
        body: NoBody,
        response: responses(
          {
            201: Type.Object(
              {
                url: Type.String({ format: 'uri', description: 'where the seller sets the password; usable once' }),
                expiresAt: Type.String({ format: 'date-time' }),
              },
              { title: 'PanelInvite' },
            ),
          },
          [...OPERATOR_ERRORS, ...BODY_ERRORS, ...NO_FIELDS, ...existing('seller')],
        ),
      },
    },
    async (request, reply) => {
      const seller = await findSeller(ctx.db, parsePathId(request.params.id));
      if (!seller) throw new ApiError('NOT_FOUND', 'Seller not found');
      const invite = await createInvite(ctx.db, seller.id, ctx.clock.now());
      const url = `${request.protocol}://${request.host}/painel/convite/${invite.token}`;
      return reply.code(201).send({ url, expiresAt: invite.expiresAt.toISOString() });
    },
  );
}
