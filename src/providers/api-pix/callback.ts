/**
 * The PSP's callback (CONTRACT §11.1): `POST {PIX_WEBHOOK_BASE_URL}/providers/pix/{secret}/pix` with
 * `{ pix: [ … ] }`. Only the ids are read from it: each Pix is confirmed with GET /pix/{e2eid},
 * and what the PSP's own API says becomes the facts. A PSP that cannot be asked gets a 502 and
 * calls again (reconciliation covers a PSP that does not).
 */
import { Type } from 'typebox';
import { ok, refuse } from '../../domain/result.ts';
import { sameSecret } from '../../domain/secrets.ts';
import type { InboundEndpoint } from '../ports.ts';
import { ApiPixError } from './client/api-pix-client.ts';
import type { ApiPixConnector } from './connector.ts';
import { factsOfPix } from './facts.ts';

const Callback = Type.Object({
  pix: Type.Array(Type.Object({ endToEndId: Type.String({ pattern: '^[A-Za-z0-9]{32}$' }) }), { minItems: 1, maxItems: 1000 }),
});

const idsOf = (body: unknown) => [...new Set((body as { pix: { endToEndId: string }[] }).pix.map((p) => p.endToEndId))];

export function pixCallback(connector: ApiPixConnector, webhookSecret: string, installationId: string): InboundEndpoint {
  return {
    provider: 'api-pix',
    url: '/providers/pix/:secret/pix',
    body: Callback,
    // Without the secret the endpoint does not exist, whatever the body.
    authenticate: ({ params }) => (sameSecret(params.secret ?? '', webhookSecret) ? null : { refusal: { code: 'NOT_FOUND', message: 'Not found' } }),
    async read({ body, log }) {
      const facts = [];
      for (const id of idsOf(body)) {
        let pix: Awaited<ReturnType<ApiPixConnector['client']['getPix']>> | null;
        try {
          pix = await connector.client.getPix(id);
        } catch (error) {
          if (!(error instanceof ApiPixError && error.status === 404)) {
            log.warn({ err: error, endToEndId: id }, 'PIX callback: the PSP could not confirm this Pix');
            return refuse('PROVIDER_ERROR', 'The PSP could not confirm the Pix; call again');
          }
          pix = null;
        }
        // A Pix the PSP does not know is not a payment, whatever the body said.
        if (pix !== null && pix.endToEndId === id) facts.push(...factsOfPix(pix, installationId));
      }
      return ok(facts);
    },
    answer: (body) => ({ contentType: 'application/json; charset=utf-8', body: { received: idsOf(body).length } }),
  };
}
