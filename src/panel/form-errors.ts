/**
 * A form's errors, each beside the input it concerns (CONTRACT §12: a refusal shown where it is
 * fixed), and one for the form as a whole when no single input is at fault.
 */
import type { FieldError, PublicErrorCode } from '../domain/errors.ts';
import { detailInWords } from './messages.ts';

export interface FormErrors {
  /** About the form as a whole (wrong password, fees changed…). */
  form?: string;
  /** By input id: the text shown beside that input. */
  fields: Record<string, string>;
}

export const no_errors: FormErrors = { fields: {} };
export const onForm = (text: string): FormErrors => ({ form: text, fields: {} });
export const onField = (input: string, text: string): FormErrors => ({ fields: { [input]: text } });

// Refusals that are about one field of the use case's input, whatever the form.
const field_of_code: Partial<Record<PublicErrorCode, string>> = {
  INVALID_PIX_KEY: 'pixKey',
  MINIMUM_VALUE: 'amount',
  MAXIMUM_VALUE: 'amount',
  INSUFFICIENT_BALANCE: 'amount',
  REFUND_EXCEEDS_AMOUNT: 'amount',
};

/**
 * A use case's refusal placed on a form: beside the input of the field it names (`inputs`: the use
 * case's field → the form's input id), else on the form as a whole.
 */
export function placed(refusal: { error: string; code: PublicErrorCode; details?: FieldError[] }, inputs: Record<string, string>): FormErrors {
  const input = inputs[field_of_code[refusal.code] ?? ''];
  if (input) return onField(input, refusal.error);
  if (refusal.code !== 'VALIDATION_ERROR' || !refusal.details?.length) return onForm(refusal.error);
  const fields: Record<string, string> = {};
  for (const d of refusal.details) {
    const at = inputs[d.field];
    if (at) fields[at] = detailInWords(d);
  }
  // A detail no input of this form holds: the whole refusal, in words, on the form.
  const unplaced = refusal.details.some((d) => !inputs[d.field]);
  return unplaced ? { form: refusal.error, fields } : { fields };
}

/**
 * For templates: the attributes of input `id` (a fixed id of the template's own) when it has an
 * error: invalid, described by the error beside it, and focused first so a keyboard lands on it.
 */
export function invalidAttributes(errors: FormErrors): (id: string) => string {
  const first = Object.keys(errors.fields)[0];
  return (id) => {
    if (errors.fields[id] === undefined) return '';
    return ` aria-invalid="true" aria-describedby="${id}-erro"${id === first ? ' autofocus' : ''}`;
  };
}
