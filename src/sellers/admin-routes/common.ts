/** What the operator's seller operations share: their tag and security, the Seller schemas and view, the path's seller. */
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../domain/errors.ts';
import { type FeeSchedule, FeeScheduleSchema } from '../../domain/fees.ts';
import { parsePathId } from '../../http/ids.ts';
import { operatorSecurity } from '../../http/router.ts';
import { findSeller, type SellerRow } from '../sellers-repo.ts';

export const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' });
export const Name = Type.String({ minLength: 1, maxLength: 200 });
export const Timestamp = Type.String({ format: 'date-time' });

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
export const Seller = Type.Object(sellerFields, { title: 'Seller' });
const KeySummary = Type.Object(
  { publicKey: Type.String(), createdAt: Timestamp, revokedAt: Type.Union([Timestamp, Type.Null()]) },
  { title: 'ApiKeySummary' },
);
export const SellerWithKeys = Type.Object({ ...sellerFields, keys: Type.Array(KeySummary) }, { title: 'SellerWithKeys' });
export const NewKey = {
  publicKey: Type.String({ description: 'X-Api-Public-Key' }),
  privateKey: Type.String({ description: 'X-Api-Private-Key: shown once, stored only as a digest' }),
};
export const CreatedSeller = Type.Object({ ...sellerFields, ...NewKey }, { title: 'SellerCreated' });

export const common = { tags: ['operator'], security: operatorSecurity };

export function sellerView(s: SellerRow) {
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

export async function existingSeller(ctx: AppContext, rawId: string): Promise<SellerRow> {
  const seller = await findSeller(ctx.db, parsePathId(rawId));
  if (!seller) throw new ApiError('NOT_FOUND', 'Seller not found');
  return seller;
}
