/** The seller's Standard Webhooks signing secret (CONTRACT §13): read it, rotate it. */
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { errorResponses, NoBody, Nullable, type Router, sellerSecurity } from '../http/router.ts';
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
        response: { 200: SigningSecretBody, ...errorResponses },
      },
    },
    async (request) => secretView(await currentSigningSecret(ctx.db, request.sellerId, ctx.clock.now())),
  );

  app.post(
    '/api/signing-secret/rotate',
    {
      schema: {
        ...common,
        operationId: 'rotateSigningSecret',
        summary: 'Replace the signing secret; the old one keeps signing for 24 hours',
        body: NoBody,
        response: { 200: SigningSecretBody, ...errorResponses },
      },
    },
    async (request) => secretView(await rotateSigningSecret(ctx, request.sellerId)),
  );
}
