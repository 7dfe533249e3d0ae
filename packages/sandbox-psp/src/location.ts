/**
 * What a payer's app reads after scanning a dynamic code: GET {location} answers the charge as a
 * JWS (`application/jose`), and the signing key is published at the `jku` of its header. Both are
 * open (the location is a capability URL), as the file's CobPayload tag says.
 */
import type { FastifyInstance } from 'fastify';
import { cobPayloadJson, findCobByToken, isExpired } from './cob-store.ts';
import type { JwsSigner } from './jws.ts';
import { notFound } from './problems.ts';
import type { Queryable } from './sql.ts';
import type { PspClock } from './types.ts';

export const LOCATION_PATH = '/qr/v2/';
export const JWKS_PATH = '/.well-known/jwks.json';

export interface LocationRouteOptions {
  db: Queryable;
  clock: PspClock;
  signer: JwsSigner;
  jwksUrl(): string;
}

export function registerLocationRoutes(app: FastifyInstance, o: LocationRouteOptions): void {
  app.get<{ Params: { token: string } }>(`${LOCATION_PATH}:token`, async (request, reply) => {
    const { token } = request.params;
    const row = /^[0-9a-f]{32}$/.test(token) ? await findCobByToken(o.db, token) : null;
    const now = o.clock.now();
    // A removed charge, or one past its expiry, is no longer shown (the file leaves this to the PSP);
    // a paid one still is, so the payer's app can say it was paid.
    if (!row || row.status.startsWith('REMOVIDA') || (row.status === 'ATIVA' && isExpired(row, now))) {
      throw notFound('CobPayloadNaoEncontrado', 'A cobrança em questão não foi encontrada para a location requisitada.');
    }
    const jws = o.signer.sign(cobPayloadJson(row, now), o.jwksUrl());
    return reply.type('application/jose').header('cache-control', 'no-store').send(jws);
  });

  app.get(JWKS_PATH, async (_request, reply) => reply.type('application/jwk-set+json').send(o.signer.jwks));
}
