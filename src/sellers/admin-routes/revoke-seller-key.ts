import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { refusalError } from '../../domain/result.ts';
import { parsePathId } from '../../http/ids.ts';
import { BODY_ERRORS, OPERATOR_ERRORS, responses } from '../../http/openapi.ts';
import type { Router } from '../../http/router.ts';
import { revokeSellerKey } from '../api-keys.ts';
import { common } from './common.ts';

const KeyParams = Type.Object({
  id: Type.String({ description: 'the seller id, a positive integer' }),
  publicKey: Type.String({ description: 'the public key to revoke (`pk_…`)' }),
});

export function revokeSellerKeyRoute(app: Router, ctx: AppContext): void {
  app.delete(
    '/admin/sellers/:id/keys/:publicKey',
    {
      schema: {
        ...common,
        operationId: 'revokeSellerKey',
        summary: 'Revoke a key pair at once, in every process',
        params: KeyParams,
        response: responses({ 204: Type.Null() }, [
          ...OPERATOR_ERRORS,
          ...BODY_ERRORS,
          ['BAD_REQUEST', '`id` is not a positive integer of at most 2^53 − 1, `publicKey` is not a public key as issued, or the URL is malformed'],
          ['NOT_FOUND', 'this seller has no such key'],
        ]),
      },
    },
    async (request, reply) => {
      const revoked = await revokeSellerKey(ctx, parsePathId(request.params.id), request.params.publicKey);
      if (!revoked.ok) throw refusalError(revoked.refusal);
      return reply.status(204).send(null);
    },
  );
}
