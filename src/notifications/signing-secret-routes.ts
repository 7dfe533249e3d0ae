/** The seller's Standard Webhooks signing secret (CONTRACT §13): read it, rotate it. */
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { refusalError } from '../domain/result.ts';
import { idempotent, sendAnswer } from '../http/idempotency.ts';
import { BODY_ERRORS, IDEMPOTENCY_ERRORS, NO_FIELDS, responses, SELLER_ERRORS } from '../http/openapi.ts';
import { IdempotencyHeaders, NoBody, Nullable, noBodyRefusal, type Router, sellerSecurity } from '../http/router.ts';
import { currentSigningSecret, rotateSigningSecret, type SigningSecret } from './signing-secrets.ts';

const SigningSecretBody = Type.Object(
  {
    secret: Type.String({ description: '`whsec_` and the base64 of 32 random bytes: the key of every `webhook-signature`' }),
    createdAt: Type.String({ format: 'date-time' }),
    previousSecretExpiresAt: Nullable(
      Type.String({ format: 'date-time', description: 'until then the secret this one replaced also signs (a second `v1,` entry)' }),
    ),
  },
  { title: 'SigningSecret' },
);
const common = { tags: ['notifications'], security: sellerSecurity };

const secretView = (s: SigningSecret) => ({
  secret: s.secret,
  createdAt: s.createdAt.toISOString(),
  previousSecretExpiresAt: s.previousSecretExpiresAt?.toISOString() ?? null,
});

export async function signingSecretRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/api/signing-secret',
    {
      schema: {
        ...common,
        operationId: 'getSigningSecret',
        summary: 'The secret that signs your notifications (Standard Webhooks)',
        response: responses({ 200: SigningSecretBody }, SELLER_ERRORS),
      },
    },
    async (request, reply) => {
      // A secret: no cache along the way may keep it.
      void reply.header('cache-control', 'no-store');
      const secret = await currentSigningSecret(ctx.db, request.sellerId, ctx.clock.now());
      if (!secret.ok) throw refusalError(secret.refusal);
      return secretView(secret.value);
    },
  );

  app.post(
    '/api/signing-secret/rotate',
    {
      schema: {
        ...common,
        operationId: 'rotateSigningSecret',
        summary: 'Replace the signing secret; the old one keeps signing for 24 hours',
        headers: IdempotencyHeaders,
        body: NoBody,
        response: responses({ 200: SigningSecretBody }, [...SELLER_ERRORS, ...BODY_ERRORS, ...NO_FIELDS, ...IDEMPOTENCY_ERRORS]),
      },
      // rotateOnce checks NoBody inside the keyed request, so that a 400 is kept and replayed.
      validatorCompiler: () => () => true,
    },
    // Idempotent like every money POST: a client retrying a lost answer must not retire, at once, the
    // secret its receivers hold (the first rotation's new one) by rotating a second time.
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      void reply.header('cache-control', 'no-store');
      const answer = await rotateOnce(ctx, request.sellerId, typeof key === 'string' ? key : undefined, request.body);
      return sendAnswer(reply, answer);
    },
  );
}

/** One rotation per Idempotency-Key (the API's header, or the panel form's order id); `body` as sent, which must be none. */
export function rotateOnce(ctx: AppContext, sellerId: number, key: string | undefined, body: unknown = {}) {
  const now = ctx.clock.now();
  const refused = noBodyRefusal(body);
  return idempotent(
    {
      db: ctx.db,
      fingerprintKey: ctx.requestFingerprintKey,
      sellerId,
      endpoint: 'POST /api/signing-secret/rotate',
      key,
      body: refused ? body : {},
      now,
    },
    async (q) => {
      if (refused) return refused;
      const rotated = await rotateSigningSecret(q, sellerId, now);
      // Thrown, so the rotation rolls back (a 5xx answer is not kept for the key either).
      if (!rotated.ok) throw refusalError(rotated.refusal);
      return { done: secretView(rotated.value) };
    },
  );
}
