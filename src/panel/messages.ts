/** The API's refusals in the panel's words (CONTRACT §12: "the same errors shown in words"). */
import type { FieldError, PublicErrorCode } from '../domain/errors.ts';
import { PUBLIC_ERRORS } from '../http/error-bodies.ts';

const words: Partial<Record<PublicErrorCode, string>> = {
  VALIDATION_ERROR: 'Confira os campos:',
  INVALID_PIX_KEY: 'A chave PIX não é válida para o tipo escolhido.',
  BAD_REQUEST: 'O pedido não pôde ser entendido.',
  FORBIDDEN: 'Isto pertence a outra conta.',
  NOT_FOUND: 'Não encontrado nesta conta.',
  API_WITHDRAWAL_DISABLED_GLOBALLY: 'Saques estão desativados para esta conta.',
  TRANSFER_NOT_ALLOWED: 'Transferências não são permitidas para esta conta.',
  INVALID_TRANSITION: 'Esta ação não é possível no status atual.',
  IDEMPOTENCY_KEY_IN_USE: 'Este pedido já está sendo processado; aguarde e atualize a página.',
  IDEMPOTENCY_KEY_REUSED: 'Este formulário já foi enviado com outros valores; abra-o de novo.',
  MINIMUM_VALUE: 'O valor está abaixo do mínimo (R$ 100,00 para saques, e as tarifas não podem alcançar o valor).',
  MAXIMUM_VALUE: 'O valor está acima do máximo (R$ 100.000,00 por saque).',
  INSUFFICIENT_BALANCE: 'O saldo disponível não cobre este valor.',
  REFUND_EXCEEDS_AMOUNT: 'O valor do estorno passa do que ainda pode ser estornado desta venda.',
  RATE_LIMITED: 'Muitos pedidos seguidos; tente de novo em instantes.',
  PROVIDER_ERROR: 'O provedor de pagamento não respondeu como esperado; tente de novo mais tarde.',
};

// The API's field names as the panel's forms label them.
const labels: Record<string, string> = { amount: 'Valor', pixKey: 'Chave PIX', pixKeyType: 'Tipo de chave', url: 'URL', types: 'Tipos' };

/** The refusal's HTTP status and its text; a field error names the form's label and the API's reason. */
export function inWords(code: PublicErrorCode, details?: FieldError[]): { status: number; text: string } {
  // A code read back from a stored answer may be one this version no longer has.
  const status = PUBLIC_ERRORS[code]?.status ?? 400;
  const text = words[code] ?? 'Não foi possível concluir a ação.';
  if (code !== 'VALIDATION_ERROR' || !details?.length) return { status, text };
  return { status, text: `${text} ${details.map((d) => `${labels[d.field] ?? d.field} (${d.message})`).join('; ')}.` };
}

/** One field's refusal, said beside the field (the API's reason, as the API gives it). */
export const detailInWords = (d: FieldError): string => `Este campo não foi aceito: ${d.message}.`;

/** A stored refusal (an idempotent replay: `errorType` or `error`, and `details`) in words, with its code and details. */
export function storedInWords(status: number, body: unknown): { status: number; text: string; code: PublicErrorCode; details?: FieldError[] } {
  const stored = (typeof body === 'string' ? JSON.parse(body) : body) as { errorType?: PublicErrorCode; details?: FieldError[] };
  const code = stored.errorType ?? 'BAD_REQUEST';
  return { status, text: inWords(code, stored.details).text, code, ...(stored.details ? { details: stored.details } : {}) };
}
