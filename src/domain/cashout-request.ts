/**
 * CONTRACT §8's cashout checks, in their order, as values. The balance check (the last one) is
 * made by the database, atomically with the debit.
 */
import { Type } from 'typebox';
import { bodyChecker, isPlainObject } from './body-schema.ts';
import { type CashoutFees, cashoutFees, type FeeSchedule } from './fees.ts';
import { parseReaisToCents } from './money.ts';
import { normalizePixKey, PIX_KEY_MAX_LENGTH, PIX_KEY_TYPES, type PixKeyType } from './pix-keys.ts';
import { ok, type Result, refuse } from './result.ts';

export const cashout_min_cents = 10_000; // R$ 100,00
export const cashout_max_cents = 10_000_000; // R$ 100.000,00
const pix_key_min_length = 8;
// Far above the maximum cashout, and short enough that no amount costs more to read than it is worth.
const amount_text_max_length = 16;
const amount_rule = `reais as a number, or a string such as "150.50" (at most ${amount_text_max_length} characters): greater than zero, at most two decimals`;

/** The body of POST /api/public/cashout: the one schema that checks it (step 2) and documents it. */
export const CashoutBody = Type.Object(
  {
    amount: Type.Union([
      Type.Number({ description: amount_rule }),
      Type.String({ maxLength: amount_text_max_length, pattern: '^\\d+(\\.\\d{1,2})?$', description: amount_rule }),
    ]),
    pixKey: Type.String({
      minLength: pix_key_min_length,
      maxLength: PIX_KEY_MAX_LENGTH,
      description: `a string of ${pix_key_min_length} to ${PIX_KEY_MAX_LENGTH} characters`,
      // For the OpenAPI document only (http/openapi-document.ts): errors quote `description`.
      'x-description':
        'a key of its pixKeyType: CPF or CNPJ with valid check digits (punctuation allowed), an e-mail, PHONE as +55, the area code and the number, RANDOM a UUID; answered normalised',
    }),
    pixKeyType: Type.Optional(Type.Union([Type.Enum(PIX_KEY_TYPES, { description: 'default CPF' }), Type.Null()])),
  },
  {
    title: 'CashoutRequest',
    'x-description': 'Unknown fields are ignored. Amounts in reais: from 100.00 to 100000.00, at most the available balance.',
  },
);

const checkCashoutBody = bodyChecker(CashoutBody, { depth: 1, maxItems: 0 });

export interface CashoutRequest {
  amount: number;
  pixKey: string;
  pixKeyType: PixKeyType;
}

/** Steps 2 and 3: the body's shape, then the key for its type. */
export function parseCashoutRequest(body: unknown): Result<CashoutRequest> {
  if (!isPlainObject(body)) return refuse('VALIDATION_ERROR', 'Body must be a JSON object', [{ field: 'body', message: 'must be an object' }]);
  const { data, errors } = checkCashoutBody(body);
  // The amount's value rules (exact cents, greater than zero) once its type is right; first, as it comes first.
  const amount = errors.some((e) => e.field === 'amount') ? null : parseReaisToCents(data.amount);
  if (amount && !amount.ok) errors.unshift({ field: 'amount', message: amount.refusal.message });
  if (errors.length > 0 || !amount?.ok) return refuse('VALIDATION_ERROR', 'The request has invalid fields', errors);
  const type = data.pixKeyType ?? 'CPF';
  const key = normalizePixKey(type, data.pixKey);
  if (!key.ok) {
    const message = `is not a valid ${type} key: ${key.refusal.message}`;
    return refuse('INVALID_PIX_KEY', `Invalid pixKey: ${message}`, [{ field: 'pixKey', message }]);
  }
  return ok({ amount: amount.value, pixKey: key.value, pixKeyType: type });
}

export interface SellerCashoutSettings {
  apiWithdrawalEnabled: boolean;
  transferAllowed: boolean;
  feeSchedule: FeeSchedule;
}

/** Steps 4 to 7: the seller's permissions, then the limits; answers the fees when all pass. */
export function checkCashoutPolicy(request: CashoutRequest, seller: SellerCashoutSettings): Result<CashoutFees> {
  if (!seller.apiWithdrawalEnabled) return refuse('API_WITHDRAWAL_DISABLED_GLOBALLY', 'Cashout through the API is disabled for this account');
  if (!seller.transferAllowed) return refuse('TRANSFER_NOT_ALLOWED', 'Transfers are not allowed for this account');
  if (request.amount < cashout_min_cents) return refuse('MINIMUM_VALUE', 'The minimum cashout is 100.00');
  if (request.amount > cashout_max_cents) return refuse('MAXIMUM_VALUE', 'The maximum cashout is 100000.00');
  const fees = cashoutFees(request.amount, seller.feeSchedule.cashout);
  if (fees.net <= 0) return refuse('MINIMUM_VALUE', 'The cashout fees reach the amount');
  return ok(fees);
}
