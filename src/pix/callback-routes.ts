import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { ApiError } from '../domain/errors.ts';
import { sameSecret } from '../domain/secrets.ts';
import type { Router } from '../http/router.ts';
import { ApiPixError } from '../pix-rail/api-pix-client.ts';
import { applyDevolucoes } from './devolucoes.ts';
import { applyReceivedPix } from './received-pix.ts';

// The API Pix callback: `{ pix: [ … ] }`. Only the ids are read from it; the rest comes from the PSP's API.
const Callback = Type.Object({
  pix: Type.Array(Type.Object({ endToEndId: Type.String({ pattern: '^[A-Za-z0-9]{32}$' }) }), { minItems: 1, maxItems: 1000 }),
});

/**
 * `POST /providers/pix/{secret}/pix` (CONTRACT §11.1). Each Pix is confirmed with GET /pix/{e2eid}
 * before it moves money, and the PSP is answered 200 only once all of it is committed; a PSP that
 * cannot be asked gets a 502, and calls again (reconciliation covers a PSP that does not).
 */
export async function pixCallbackRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/providers/pix/:secret/pix',
    {
      schema: { hide: true, params: Type.Object({ secret: Type.String({ maxLength: 256 }) }), body: Callback },
      // Before the body is read or validated: without the secret the endpoint does not exist.
      onRequest: async (request) => {
        const { secret } = request.params as { secret: string };
        if (!sameSecret(secret, ctx.config.pixRail.webhookSecret)) throw new ApiError('NOT_FOUND', 'Not found');
      },
    },
    async (request) => {
      const ids = [...new Set(request.body.pix.map((p) => p.endToEndId))];
      for (const id of ids) {
        const pix = await ctx.pix.client.getPix(id).catch((error: unknown) => {
          if (error instanceof ApiPixError && error.status === 404) return null;
          request.log.warn({ err: error, endToEndId: id }, 'PIX callback: the PSP could not confirm this Pix');
          throw new ApiError('PROVIDER_ERROR', 'The PSP could not confirm the Pix; call again');
        });
        // A Pix the PSP does not know is not a payment, whatever the body said.
        if (pix === null || pix.endToEndId !== id) continue;
        await applyReceivedPix(ctx, pix);
        await applyDevolucoes(ctx, pix);
      }
      return { received: ids.length };
    },
  );
}
