import { Type } from 'typebox';
import { CASHOUT_STATUSES } from '../domain/cashout-states.ts';
import { centsToReaisString } from '../domain/money.ts';
import type { CashoutForNotification } from '../domain/notification-payloads.ts';
import { PIX_KEY_TYPES } from '../domain/pix-keys.ts';
import { StringEnum } from '../http/router.ts';
import type { CashoutRow } from './cashouts-repo.ts';

const reais_pattern = '^-?\\d+\\.\\d{2}$';
const Reais = Type.String({ description: 'reais with two decimals', pattern: reais_pattern });

/** The spec's Cashout object: money as strings of reais with two decimals. */
export const Cashout = Type.Object(
  {
    id: Type.Integer(),
    amount: Reais,
    netAmount: Type.String({ description: 'reais with two decimals: the amount less the fees, what the PIX key receives', pattern: reais_pattern }),
    pixKey: Type.String({ description: 'the destination key, normalised' }),
    pixKeyType: StringEnum(PIX_KEY_TYPES),
    status: StringEnum(CASHOUT_STATUSES, { description: 'PENDING at creation; later changes arrive through WITHDRAWAL webhooks' }),
    createdAt: Type.String({ format: 'date-time' }),
    fees: Type.Object(
      { fixed: Reais, variable: Reais, total: Reais },
      { title: 'CashoutFees', description: 'fixed + variable (basis points of the amount) = total, each in reais with two decimals' },
    ),
  },
  { title: 'Cashout', description: 'A payout to a PIX key: money as strings of reais with two decimals.' },
);

/** A cashout as read (GET): the spec's object, and what the payout provider said of it (additions). */
export const CashoutRead = Type.Object(
  {
    ...Cashout.properties,
    failureReason: Type.Union([Type.String(), Type.Null()], {
      description: 'why the PSP did not make the payout (status REJECTED), in its words; null otherwise',
    }),
    returnedAmount: Type.String({
      description: "reais with two decimals: money the receiver's bank sent back after the payout was made, credited to available",
      pattern: reais_pattern,
    }),
  },
  { title: 'CashoutRead', description: "A cashout as read: the spec's object, and what the payout provider said of it." },
);

export function cashoutReadView(row: CashoutRow) {
  return { ...cashoutView(row), failureReason: row.failure_reason, returnedAmount: centsToReaisString(row.returned_amount) };
}

export function cashoutView(row: CashoutRow) {
  return {
    id: row.id,
    amount: centsToReaisString(row.amount),
    netAmount: centsToReaisString(row.net_amount),
    pixKey: row.pix_key,
    pixKeyType: row.pix_key_type,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    fees: { fixed: centsToReaisString(row.fee_fixed), variable: centsToReaisString(row.fee_variable), total: centsToReaisString(row.fee_total) },
  };
}

/** The cashout as its WITHDRAWAL webhook describes it (spec Events §3). */
export function cashoutForNotification(
  row: CashoutRow,
  seller: { name: string; email: string },
): CashoutForNotification & { status: CashoutRow['status'] } {
  return {
    id: row.id,
    sellerId: row.seller_id,
    amount: row.amount,
    pixKey: row.pix_key,
    pixKeyType: row.pix_key_type,
    status: row.status,
    externalId: row.external_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    processedAt: row.processed_at,
    user: { id: row.seller_id, name: seller.name, email: seller.email },
  };
}
