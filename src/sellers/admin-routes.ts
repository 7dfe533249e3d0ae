import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { parseDocument } from '../domain/documents.ts';
import { ApiError, validationError } from '../domain/errors.ts';
import { type FeeSchedule, FeeSchedulePatch, FeeScheduleSchema } from '../domain/fees.ts';
import { mergedSchedule, platformSchedule } from '../fees/fee-settings.ts';
import { parsePathId } from '../http/ids.ts';
import { errorResponses, Fields, iso, NoBody, operatorSecurity, PathId, type Router } from '../http/router.ts';
import { revokeSellerKey } from './api-keys.ts';
import { findSeller, insertSeller, issueKey, listKeys, type SellerRow, updateSeller } from './sellers-repo.ts';

const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Timestamp = Type.String({ format: 'date-time' });

const SellerBody = Fields({ name: Name, email: Email, document: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])) });
const SellerPatch = Fields({
  name: Type.Optional(Name),
  email: Type.Optional(Email),
  apiWithdrawalEnabled: Type.Optional(Type.Boolean()),
  transferAllowed: Type.Optional(Type.Boolean()),
  feeSchedule: Type.Optional(
    Type.Union([FeeSchedulePatch, Type.Null()], {
      description: "the seller's own schedule, a deep-partial patch over its current one (or the platform's); null to follow the platform",
    }),
  ),
});
const sellerFields = {
  id: Type.Integer({ description: 'the userId of notifications' }),
  name: Type.String(),
  email: Type.String(),
  document: Type.Union([Type.String(), Type.Null()]),
  apiWithdrawalEnabled: Type.Boolean(),
  transferAllowed: Type.Boolean(),
  feeSchedule: Type.Union([FeeScheduleSchema, Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
const Seller = Type.Object(sellerFields);
const KeySummary = Type.Object({ publicKey: Type.String(), createdAt: Timestamp, revokedAt: Type.Union([Timestamp, Type.Null()]) });
const SellerWithKeys = Type.Object({ ...sellerFields, keys: Type.Array(KeySummary) });
const NewKey = { publicKey: Type.String(), privateKey: Type.String({ description: 'shown once, stored only as a digest' }) };
const CreatedSeller = Type.Object({ ...sellerFields, ...NewKey });
const KeyOut = Type.Object({ ...NewKey, createdAt: Timestamp });
const KeyParams = Type.Object({ id: Type.String(), publicKey: Type.String() });

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

export async function sellerAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  sellerRoutes(app, ctx);
  keyRoutes(app, ctx);
}

function sellerRoutes(app: Router, ctx: AppContext): void {
  app.post(
    '/admin/sellers',
    {
      schema: { ...common, summary: 'Create a seller and its first key pair', body: SellerBody, response: { 201: CreatedSeller, ...errorResponses } },
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
        summary: 'Read a seller, its settings and key list',
        params: PathId,
        response: { 200: SellerWithKeys, ...errorResponses },
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
      schema: { ...common, summary: "Change a seller's settings", params: PathId, body: SellerPatch, response: { 200: Seller, ...errorResponses } },
    },
    async (request) => sellerView(await changeSeller(ctx, parsePathId(request.params.id), request.body)),
  );
}

function keyRoutes(app: Router, ctx: AppContext): void {
  app.post(
    '/admin/sellers/:id/keys',
    {
      schema: { ...common, summary: 'Issue a new key pair', params: PathId, body: NoBody, response: { 201: KeyOut, ...errorResponses } },
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
        summary: 'Revoke a key pair at once, in every process',
        params: KeyParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await revokeSellerKey(ctx, parsePathId(request.params.id), request.params.publicKey);
      return reply.status(204).send(null);
    },
  );
}
