import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { BODY_ERRORS, existing, NO_FIELDS, OPERATOR_ERRORS, responses } from '../../http/openapi.ts';
import { NoBody, PathId, type Router } from '../../http/router.ts';
import { issueKey } from '../sellers-repo.ts';
import { common, existingSeller, NewKey, Timestamp } from './common.ts';

const KeyOut = Type.Object({ ...NewKey, createdAt: Timestamp }, { title: 'ApiKeyCreated' });

export function createSellerKeyRoute(app: Router, ctx: AppContext): void {
  app.post(
    '/admin/sellers/:id/keys',
    {
      schema: {
        ...common,
        operationId: 'createSellerKey',
        summary: 'Issue a new key pair',
        description: 'The private key is shown only in this answer; the keys issued before keep working until revoked.',
        params: PathId,
        body: NoBody,
        response: responses({ 201: KeyOut }, [...OPERATOR_ERRORS, ...BODY_ERRORS, ...NO_FIELDS, ...existing('seller')]),
      },
    },
    async (request, reply) => {
      const seller = await existingSeller(ctx, request.params.id);
      const key = await issueKey(ctx.db, seller.id);
      return reply.status(201).send({ publicKey: key.publicKey, privateKey: key.privateKey, createdAt: key.createdAt.toISOString() });
    },
  );
}
