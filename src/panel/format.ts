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

export const method_names: Record<string, string> = {
  PIX: 'PIX',
  CREDIT_CARD: 'Cartão de crédito',
  DEBIT_CARD: 'Cartão de débito',
  BOLETO: 'Boleto',
};

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
