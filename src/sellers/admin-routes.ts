import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { parseDocument } from '../domain/documents.ts';
import { ApiError, validationError } from '../domain/errors.ts';
import { type FeeSchedule, FeeSchedulePatch, FeeScheduleSchema } from '../domain/fees.ts';
import { mergedSchedule, platformSchedule } from '../fees/fee-settings.ts';
import { parsePathId } from '../http/ids.ts';
import { BODY_ERRORS, type BodyExample, existing, NO_FIELDS, OPERATOR_ERRORS, responses } from '../http/openapi.ts';
import { Fields, iso, NoBody, operatorSecurity, PathId, type Router } from '../http/router.ts';
import { revokeSellerKey } from './api-keys.ts';
import { findSeller, insertSeller, issueKey, listKeys, type SellerRow, updateSeller } from './sellers-repo.ts';

const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Timestamp = Type.String({ format: 'date-time' });

const SellerBody = Fields(
  { name: Name, email: Email, document: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])) },
  { title: 'SellerRequest' },
);
const SellerPatch = Fields(
  {
    name: Type.Optional(Name),
    email: Type.Optional(Email),
    apiWithdrawalEnabled: Type.Optional(Type.Boolean()),
    transferAllowed: Type.Optional(Type.Boolean()),
    feeSchedule: Type.Optional(
      Type.Union([FeeSchedulePatch, Type.Null()], {
        description: "the seller's own schedule, a deep-partial patch over its current one (or the platform's); null to follow the platform",
      }),
    ),
  },
  { title: 'SellerPatch' },
);
const sellerFields = {
  id: Type.Integer({ description: 'the userId of notifications' }),
  name: Type.String(),
  email: Type.String(),
  document: Type.Union([Type.String(), Type.Null()], { description: 'CPF or CNPJ, normalised' }),
  apiWithdrawalEnabled: Type.Boolean({ description: 'false: POST /api/public/cashout answers 403 API_WITHDRAWAL_DISABLED_GLOBALLY' }),
  transferAllowed: Type.Boolean({ description: 'false: every cashout answers 403 TRANSFER_NOT_ALLOWED' }),
  feeSchedule: Type.Union([FeeScheduleSchema, Type.Null()], { description: "the seller's own fee schedule; null: the platform's" }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
const Seller = Type.Object(sellerFields, { title: 'Seller' });
const KeySummary = Type.Object(
  { publicKey: Type.String(), createdAt: Timestamp, revokedAt: Type.Union([Timestamp, Type.Null()]) },
  { title: 'ApiKeySummary' },
);
const SellerWithKeys = Type.Object({ ...sellerFields, keys: Type.Array(KeySummary) }, { title: 'SellerWithKeys' });
const NewKey = {
  publicKey: Type.String({ description: 'X-Api-Public-Key' }),
  privateKey: Type.String({ description: 'X-Api-Private-Key: shown once, stored only as a digest' }),
};
const CreatedSeller = Type.Object({ ...sellerFields, ...NewKey }, { title: 'SellerCreated' });
const KeyOut = Type.Object({ ...NewKey, createdAt: Timestamp }, { title: 'ApiKeyCreated' });
const KeyParams = Type.Object({
  id: Type.String({ description: 'the seller id, a positive integer' }),
  publicKey: Type.String({ description: 'the public key to revoke (`pk_…`)' }),
});

function sellerView(s: SellerRow) {
  return {
    id: s.id,
    name: s.name,
    email: s.email,
    document: s.document,
    apiWithdrawalEnabled: s.api_withdrawal_enabled,
    transferAllowed: s.transfer_allowed,
    feeSchedule: (s.fee_schedule ?? null) as FeeSchedule | null,
    createdAt: s.created_at.toISOString(),
    updatedAt: s.updated_at.toISOString(),
  };
}

function normalisedDocument(raw: string | null | undefined): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const parsed = parseDocument(raw);
  if (!parsed.ok) throw validationError([{ field: 'document', message: 'must be a valid CPF or CNPJ' }]);
  return parsed.value;
}

async function existingSeller(ctx: AppContext, rawId: string): Promise<SellerRow> {
  const seller = await findSeller(ctx.db, parsePathId(rawId));
  if (!seller) throw new ApiError('NOT_FOUND', 'Seller not found');
  return seller;
}

type SellerPatchBody = Static<typeof SellerPatch>;

/** PATCH: the seller's settings; a fee schedule is merged over its own (or the platform's) and checked whole. */
async function changeSeller(ctx: AppContext, id: number, b: SellerPatchBody): Promise<SellerRow> {
  const updated = await ctx.db.tx(async (q) => {
    const seller = await findSeller(q, id, true);
    if (!seller) throw new ApiError('NOT_FOUND', 'Seller not found');
    const feeSchedule =
      b.feeSchedule === undefined
        ? undefined
        : b.feeSchedule === null
          ? null
          : mergedSchedule((seller.fee_schedule as FeeSchedule | null) ?? (await platformSchedule(q)), b.feeSchedule, 'feeSchedule');
    return updateSeller(q, id, {
      ...(b.name !== undefined && { name: b.name }),
      ...(b.email !== undefined && { email: b.email }),
      ...(b.apiWithdrawalEnabled !== undefined && { api_withdrawal_enabled: b.apiWithdrawalEnabled }),
      ...(b.transferAllowed !== undefined && { transfer_allowed: b.transferAllowed }),
      ...(feeSchedule !== undefined && { fee_schedule: feeSchedule }),
    });
  });
  return updated!;
}

const common = { tags: ['operator'], security: operatorSecurity };

const sellerPatchExamples: Record<string, BodyExample> = {
  disableApiCashout: { summary: 'Close cashout through the API (the panel stays open)', value: { apiWithdrawalEnabled: false } },
  ownFees: {
    summary: 'A schedule of its own: PIX at 0.99 %, the rest as it was',
    value: { feeSchedule: { pix: { fixedCents: 0, percentBasisPoints: 99 } } },
  },
  platformFees: { summary: "Follow the platform's schedule again", value: { feeSchedule: null } },
  contact: { summary: 'Rename and change the e-mail', value: { name: 'Loja Exemplo Ltda', email: 'contato@loja.example.com' } },
};

export async function sellerAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  sellerRoutes(app, ctx);
  keyRoutes(app, ctx);
}

function sellerRoutes(app: Router, ctx: AppContext): void {
  app.post(
    '/admin/sellers',
    {
      schema: {
        ...common,
        operationId: 'createSeller',
        summary: 'Create a seller and its first key pair',
        description: "The answer carries the private key: it is shown only here. The seller's id is the `userId` of its notifications.",
        body: SellerBody,
        bodyExamples: {
          minimal: { summary: 'Name and e-mail', value: { name: 'Loja Exemplo', email: 'loja@example.com' } },
          withDocument: {
            summary: 'With a CNPJ (punctuation allowed, kept normalised)',
            value: { name: 'Loja Exemplo Ltda', email: 'financeiro@loja.example.com', document: '11.222.333/0001-81' },
          },
        },
        response: responses({ 201: CreatedSeller }, [
          ...OPERATOR_ERRORS,
          ...BODY_ERRORS,
          ['VALIDATION_ERROR', 'a field breaks its rule or is unknown, or `document` is not a valid CPF or CNPJ'],
        ]),
      },
    },
    async (request, reply) => {
      const document = normalisedDocument(request.body.document);
      const { seller, key } = await ctx.db.tx(async (q) => {
        const seller = await insertSeller(q, { name: request.body.name, email: request.body.email, document });
        return { seller, key: await issueKey(q, seller.id) };
      });
      return reply.status(201).send({ ...sellerView(seller), publicKey: key.publicKey, privateKey: key.privateKey });
    },
  );

  app.get(
    '/admin/sellers/:id',
    {
      schema: {
        ...common,
        operationId: 'getSeller',
        summary: 'Read a seller, its settings and key list',
        params: PathId,
        response: responses({ 200: SellerWithKeys }, [...OPERATOR_ERRORS, ...existing('seller')]),
      },
    },
    async (request) => {
      const seller = await existingSeller(ctx, request.params.id);
      const keys = await listKeys(ctx.db, seller.id);
      return {
        ...sellerView(seller),
        keys: keys.map((k) => ({ publicKey: k.publicKey, createdAt: k.createdAt.toISOString(), revokedAt: iso(k.revokedAt) })),
      };
    },
  );

  app.patch(
    '/admin/sellers/:id',
    {
      schema: {
        ...common,
        operationId: 'updateSeller',
        summary: "Change a seller's settings",
        description: "Names any of the fields and keeps the rest; a fee schedule is merged over its own (or the platform's) and checked whole.",
        params: PathId,
        body: SellerPatch,
        bodyExamples: sellerPatchExamples,
        response: responses({ 200: Seller }, [...OPERATOR_ERRORS, ...BODY_ERRORS, 'VALIDATION_ERROR', ...existing('seller')]),
      },
    },
    async (request) => sellerView(await changeSeller(ctx, parsePathId(request.params.id), request.body)),
  );
}

function keyRoutes(app: Router, ctx: AppContext): void {
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
      await revokeSellerKey(ctx, parsePathId(request.params.id), request.params.publicKey);
      return reply.status(204).send(null);
    },
  );
}
