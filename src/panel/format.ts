/** How the panel writes money and dates (CONTRACT §12): R$ 1.234,56 and São Paulo time. */
const brl = new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' });
const dateTime = new Intl.DateTimeFormat('pt-BR', { timeZone: 'America/Sao_Paulo', dateStyle: 'short', timeStyle: 'short' });
const dayMonth = new Intl.DateTimeFormat('pt-BR', { timeZone: 'America/Sao_Paulo', day: '2-digit', month: '2-digit' });

/** Cents as reais (a plain space where Intl puts a no-break one, so the text is what people type). */
export function reais(cents: number): string {
  return brl.format(cents / 100).replace(/\u00a0/g, ' ');
}

export function whenSaoPaulo(date: Date): string {
  return dateTime.format(date).replace(',', '');
}

export function dayOf(date: Date): string {
  return dayMonth.format(date);
}

/** A CPF (11 digits) or CNPJ (14 characters, letters allowed since 2026) with its punctuation; anything else as given. */
export function formatDocument(document: string): string {
  const d = document.replace(/[.\-/\s]/g, '').toUpperCase();
  if (/^\d{11}$/.test(d)) return `${d.slice(0, 3)}.${d.slice(3, 6)}.${d.slice(6, 9)}-${d.slice(9)}`;
  if (/^[0-9A-Z]{12}\d{2}$/.test(d)) return `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}`;
  return document;
}

/** A Brazilian phone (+55 or not) as +55 11 98765-4321; anything else as given. */
export function formatPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  // A national number is 10 or 11 digits, so 12 or 13 starting with 55 carry the country code.
  const national = /^55\d{10,11}$/.test(digits) ? digits.slice(2) : digits;
  const m = /^(\d{2})(\d{4,5})(\d{4})$/.exec(national);
  return m ? `+55 ${m[1]} ${m[2]}-${m[3]}` : phone;
}

/** A PIX key as people write it: CPF and CNPJ punctuated, a phone grouped; e-mail and random keys as they are. */
export function formatPixKey(type: string, key: string): string {
  if (type === 'CPF' || type === 'CNPJ') return formatDocument(key);
  return type === 'PHONE' ? formatPhone(key) : key;
}

/**
 * Reais as people type them in a form → the API's decimal text ("1234.56"), or null when it is not
 * a number of reais. With a comma, the comma is the decimal mark and dots may only group thousands
 * ("1.234,56", "150,5"); without one, a dot is the decimal mark ("100.50") unless it groups
 * thousands exactly ("1.234"). "R$" and spaces are ignored; anything else is refused, never guessed.
 */
export function reaisTyped(text: string): string | null {
  const t = text.replace(/^\s*R\$/, '').replace(/\s/g, '');
  if (/^(\d{1,3}(\.\d{3})+|\d+)(,\d{1,2})?$/.test(t)) return t.replace(/\./g, '').replace(',', '.');
  return /^\d+\.\d{1,2}$/.test(t) ? t : null;
}
