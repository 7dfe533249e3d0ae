import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import { secretMatches, digestOf } from '../sellers/keys.ts';
import type { ApiKeyAuthenticator } from '../sellers/authenticator.ts';

declare module 'fastify' {
  interface FastifyRequest { sellerId: number }
}

const max_key_length = 256;

/** onRequest hook for seller routes: runs before body parsing and validation (CONTRACT §2). */
export function sellerAuth(authenticator: ApiKeyAuthenticator) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const publicKey = request.headers['x-api-public-key'];
    const privateKey = request.headers['x-api-private-key'];
    if (typeof publicKey !== 'string' || typeof privateKey !== 'string' || !publicKey || !privateKey) {
      throw new ApiError('UNAUTHORIZED', 'Missing X-Api-Public-Key or X-Api-Private-Key header');
    }
    const sellerId = publicKey.length <= max_key_length && privateKey.length <= max_key_length
      ? await authenticator.authenticate(publicKey, privateKey) : null;
    if (sellerId === null) throw new ApiError('UNAUTHORIZED', 'Invalid API keys');
    request.sellerId = sellerId;
  };
}

/** onRequest hook for operator routes: `Authorization: Bearer <ADMIN_TOKEN>`. */
export function operatorAuth(adminToken: string) {
  const digest = digestOf(adminToken);
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!token || !secretMatches(token, digest)) throw new ApiError('UNAUTHORIZED', 'Missing or invalid operator token');
  };
}
