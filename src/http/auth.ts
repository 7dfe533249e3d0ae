import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import { digestOf, secretMatches } from '../domain/secrets.ts';
import type { RateLimits, TokenBuckets } from './rate-limit.ts';

declare module 'fastify' {
  interface FastifyRequest {
    sellerId: number;
  }
}

const max_key_length = 256;

/** Resolves a key pair to its seller (src/sellers/authenticator.ts). */
export interface KeyAuthenticator {
  authenticate(publicKey: string, privateKey: string): Promise<number | null>;
}

function rateLimited(message: string, retryAfterSeconds: number): ApiError {
  const error = new ApiError('RATE_LIMITED', message);
  error.retryAfterSeconds = retryAfterSeconds;
  return error;
}

/** An address over its failure budget is refused before its credentials are looked at (CONTRACT §2). */
function refuseBlockedAddress(failures: TokenBuckets, request: FastifyRequest): void {
  const wait = failures.waitSeconds(request.ip);
  if (wait > 0) throw rateLimited(`Too many failed authentications from this address; retry in ${wait} s`, wait);
}

function unauthorized(failures: TokenBuckets, request: FastifyRequest, message: string): ApiError {
  failures.take(request.ip);
  return new ApiError('UNAUTHORIZED', message);
}

/** onRequest hook for seller routes: runs before body parsing and validation (CONTRACT §2). */
export function sellerAuth(authenticator: KeyAuthenticator, limits: RateLimits) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    refuseBlockedAddress(limits.authFailures, request);
    const publicKey = request.headers['x-api-public-key'];
    const privateKey = request.headers['x-api-private-key'];
    if (typeof publicKey !== 'string' || typeof privateKey !== 'string' || !publicKey || !privateKey) {
      throw unauthorized(limits.authFailures, request, 'Missing X-Api-Public-Key or X-Api-Private-Key header');
    }
    const sellerId =
      publicKey.length <= max_key_length && privateKey.length <= max_key_length ? await authenticator.authenticate(publicKey, privateKey) : null;
    if (sellerId === null) throw unauthorized(limits.authFailures, request, 'Invalid API keys');
    const wait = limits.sellers.take(publicKey);
    if (wait > 0) throw rateLimited(`Too many requests for this API key; retry in ${wait} s`, wait);
    request.sellerId = sellerId;
  };
}

/** onRequest hook for operator routes: `Authorization: Bearer <ADMIN_TOKEN>`. */
export function operatorAuth(adminToken: string, limits: RateLimits) {
  const digest = digestOf(adminToken);
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    refuseBlockedAddress(limits.authFailures, request);
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!token || !secretMatches(token, digest)) throw unauthorized(limits.authFailures, request, 'Missing or invalid operator token');
  };
}
