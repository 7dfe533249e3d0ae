import { type Static, Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../domain/errors.ts';
import { type FeeSchedule, FeeSchedulePatch } from '../../domain/fees.ts';
import { mergedSchedule, platformSchedule } from '../../fees/fee-settings.ts';
import { parsePathId } from '../../http/ids.ts';
import { BODY_ERRORS, type BodyExample, existing, OPERATOR_ERRORS, responses } from '../../http/openapi.ts';
import { Fields, PathId, type Router } from '../../http/router.ts';
import { findSeller, type SellerRow, updateSeller } from '../sellers-repo.ts';
import { common, Email, Name, Seller, sellerView } from './common.ts';

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

const sellerPatchExamples: Record<string, BodyExample> = {
  disableApiCashout: { summary: 'Close cashout through the API (the panel stays open)', value: { apiWithdrawalEnabled: false } },
  ownFees: {
    summary: 'A schedule of its own: PIX at 0.99 %, the rest as it was',
    value: { feeSchedule: { pix: { fixedCents: 0, percentBasisPoints: 99 } } },
  },
  platformFees: { summary: "Follow the platform's schedule again", value: { feeSchedule: null } },
  contact: { summary: 'Rename and change the e-mail', value: { name: 'Loja Exemplo Ltda', email: 'contato@loja.example.com' } },
};

export function updateSellerRoute(app: Router, ctx: AppContext): void {
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
