/**
 * OAuth2 client credentials (RFC 6749 §4.4) and bearer checks. Tokens are self-contained and
 * HMAC-signed with a key derived from the client secret, so they stay valid across a restart with
 * the same credentials, as a real PSP's would, and nothing about them is stored.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problem, unauthorized } from './problems.ts';
import type { PspClock } from './types.ts';

// The API Pix's scopes, and Efí's for sending Pix, reading the account (CONTRACT §11.3, §15) and MED infractions.
export const SCOPES = [
  'cob.write',
  'cob.read',
  'pix.write',
  'pix.read',
  'webhook.write',
  'webhook.read',
  'pix.send',
  'gn.pix.send.read',
  'gn.balance.read',
  'gn.infractions.read',
  'gn.infractions.write',
] as const;
const TOKEN_TTL_S = 3600;

export interface Credentials {
  clientId: string;
  clientSecret: string;
}

export interface TokenIssuer {
  issue(scopes: readonly string[]): { access_token: string; token_type: 'Bearer'; expires_in: number; scope: string };
  /** The token's scopes, or null when it is malformed, forged or expired. */
  verify(token: string): Set<string> | null;
}

const b64url = (data: Buffer | string): string => Buffer.from(data).toString('base64url');

export function tokenIssuer(credentials: Credentials, clock: PspClock): TokenIssuer {
  const key = createHash('sha256').update(`sandbox-psp access token\0${credentials.clientSecret}`).digest();
  const mac = (text: string) => createHmac('sha256', key).update(text).digest();
  return {
    issue(scopes) {
      const exp = Math.floor(clock.now().getTime() / 1000) + TOKEN_TTL_S;
      const body = b64url(JSON.stringify({ sub: credentials.clientId, scope: scopes.join(' '), exp }));
      return { access_token: `${body}.${b64url(mac(body))}`, token_type: 'Bearer', expires_in: TOKEN_TTL_S, scope: scopes.join(' ') };
    },
    verify(token) {
      const [body, signature, extra] = token.split('.');
      if (!body || !signature || extra !== undefined) return null;
      if (!sameBytes(Buffer.from(signature, 'base64url'), mac(body))) return null;
      const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { sub: string; scope: string; exp: number };
      if (claims.sub !== credentials.clientId || claims.exp * 1000 <= clock.now().getTime()) return null;
      return new Set(claims.scope.split(' '));
    },
  };
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

// Digests first: timingSafeEqual needs equal lengths, and the lengths must not leak either.
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function basicCredentials(header: string | undefined): Credentials | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  // RFC 6749 §2.3.1: id and secret are form-urlencoded before Basic, so '+' is a space.
  const formDecode = (s: string) => decodeURIComponent(s.replaceAll('+', ' '));
  return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
}

function oauthError(reply: FastifyReply, status: number, error: string, description: string): void {
  if (status === 401) void reply.header('www-authenticate', 'Basic realm="sandbox-psp"');
  void reply.status(status).header('cache-control', 'no-store').send({ error, error_description: description });
}

/** POST /oauth/token: HTTP Basic client authentication, form body `grant_type=client_credentials[&scope=…]`. */
export function registerTokenRoute(app: FastifyInstance, credentials: Credentials, issuer: TokenIssuer): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.post('/oauth/token', async (request, reply) => {
    const given = safely(() => basicCredentials(request.headers.authorization));
    if (!given || !sameSecret(given.clientId, credentials.clientId) || !sameSecret(given.clientSecret, credentials.clientSecret)) {
      return oauthError(reply, 401, 'invalid_client', 'client authentication failed (HTTP Basic with the client id and secret)');
    }
    const form = (request.body ?? {}) as Record<string, string>;
    if (typeof form !== 'object' || form.grant_type === undefined) return oauthError(reply, 400, 'invalid_request', 'grant_type is required');
    if (form.grant_type !== 'client_credentials') return oauthError(reply, 400, 'unsupported_grant_type', 'only client_credentials');
    const asked = (form.scope ?? '').split(' ').filter(Boolean);
    const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length > 0) return oauthError(reply, 400, 'invalid_scope', `unknown scope: ${unknown.join(' ')}`);
    void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    return issuer.issue(asked.length > 0 ? asked : SCOPES);
  });
}

function safely<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null; // a malformed header (bad percent-encoding) is a failed authentication, not a 500
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The OAuth2 scope an API Pix route needs. */
    scope?: string;
  }
}

/** onRequest hook for the API Pix routes: a valid bearer token (401), with the route's scope (403). */
export function bearerCheck(issuer: TokenIssuer) {
  return async (request: FastifyRequest): Promise<void> => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match) throw unauthorized('Envie um access token válido em Authorization: Bearer.');
    const scopes = safely(() => issuer.verify(match[1]!));
    if (!scopes) throw unauthorized('Access token inválido ou expirado.');
    const needed = request.routeOptions.config.scope;
    if (needed && !scopes.has(needed)) {
      throw problem(403, 'AcessoNegado', 'Acesso Negado', `O access token não tem o escopo ${needed}.`);
    }
  };
}

/** POST /v1/authorize (Efí's Cobranças API): HTTP Basic client authentication, JSON body `{ grant_type }`. */
export function registerEfiAuthorizeRoute(app: FastifyInstance, credentials: Credentials, issuer: TokenIssuer): void {
  app.post('/v1/authorize', async (request, reply) => {
    const given = safely(() => basicCredentials(request.headers.authorization));
    if (!given || !sameSecret(given.clientId, credentials.clientId) || !sameSecret(given.clientSecret, credentials.clientSecret)) {
      return oauthError(reply, 401, 'invalid_client', 'client authentication failed (HTTP Basic with the client id and secret)');
    }
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (body.grant_type !== 'client_credentials') return oauthError(reply, 400, 'unsupported_grant_type', 'only client_credentials');
    void reply.header('cache-control', 'no-store');
    return issuer.issue(SCOPES);
  });
}
