/**
 * CONTRACT §8's cashout checks, in their order, as values. The balance check (the last one) is
 * made by the database, atomically with the debit.
 */
import { cashoutFees, type CashoutFees, type FeeSchedule } from './fees.ts';
import type { FieldError, PublicErrorCode } from './errors.ts';
import { parseReaisToCents } from './money.ts';
import { normalizePixKey, PIX_KEY_TYPES, type PixKeyType } from './pix-keys.ts';

export const cashout_min_cents = 10_000; // R$ 100,00
export const cashout_max_cents = 10_000_000; // R$ 100.000,00
const pix_key_min_length = 8;
const pix_key_max_length = 77;

export interface CashoutRequest { amount: number; pixKey: string; pixKeyType: PixKeyType }

export type Refusal = { code: PublicErrorCode; message: string; details?: FieldError[] };
export type Checked<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

/** Steps 2 and 3: the body's shape, then the key for its type. */
export function parseCashoutRequest(body: unknown): Checked<CashoutRequest> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return refuse('VALIDATION_ERROR', 'Body must be a JSON object', [{ field: 'body', message: 'must be an object' }]);
  }
  const b = body as Record<string, unknown>;
  const details: FieldError[] = [];
  const amount = parseReaisToCents(b.amount);
  if (!amount.ok) details.push({ field: 'amount', message: b.amount === undefined ? 'is required' : amount.reason });
  const rawKey = b.pixKey;
  if (typeof rawKey !== 'string') details.push({ field: 'pixKey', message: rawKey === undefined ? 'is required' : 'must be a string' });
  else if ([...rawKey].length < pix_key_min_length || [...rawKey].length > pix_key_max_length) {
    details.push({ field: 'pixKey', message: `must be ${pix_key_min_length} to ${pix_key_max_length} characters` });
  }
  const type = b.pixKeyType ?? 'CPF';
  if (typeof type !== 'string' || !(PIX_KEY_TYPES as readonly string[]).includes(type)) {
    details.push({ field: 'pixKeyType', message: `must be one of ${PIX_KEY_TYPES.join(', ')}` });
  }
  if (details.length > 0 || !amount.ok) return refuse('VALIDATION_ERROR', 'The request has invalid fields', details);
  const key = normalizePixKey(type as PixKeyType, rawKey as string);
  if (!key.ok) return refuse('INVALID_PIX_KEY', `pixKey is not a valid ${type} key: ${key.reason}`);
  return { ok: true, value: { amount: amount.cents, pixKey: key.key, pixKeyType: type as PixKeyType } };
}

export interface SellerCashoutSettings { apiWithdrawalEnabled: boolean; transferAllowed: boolean; feeSchedule: FeeSchedule }

/** Steps 4 to 7: the seller's permissions, then the limits; answers the fees when all pass. */
export function checkCashoutPolicy(request: CashoutRequest, seller: SellerCashoutSettings): Checked<CashoutFees> {
  if (!seller.apiWithdrawalEnabled) return refuse('API_WITHDRAWAL_DISABLED_GLOBALLY', 'Cashout through the API is disabled for this account');
  if (!seller.transferAllowed) return refuse('TRANSFER_NOT_ALLOWED', 'Transfers are not allowed for this account');
  if (request.amount < cashout_min_cents) return refuse('MINIMUM_VALUE', 'The minimum cashout is 100.00');
  if (request.amount > cashout_max_cents) return refuse('MAXIMUM_VALUE', 'The maximum cashout is 100000.00');
  const fees = cashoutFees(request.amount, seller.feeSchedule.cashout);
  if (fees.net <= 0) return refuse('MINIMUM_VALUE', 'The cashout fees reach the amount');
  return { ok: true, value: fees };
}

function refuse(code: PublicErrorCode, message: string, details?: FieldError[]): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: details ? { code, message, details } : { code, message } };
}
