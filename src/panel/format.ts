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
 * Reais as people type them in a form ("1.234,56", "150,5", "R$ 100", or "100.50") → the API's
 * decimal text ("1234.56"), or null when it is not a number of reais.
 */
export function reaisTyped(text: string): string | null {
  let t = text.replace(/^\s*R\$\s*/, '').replace(/\s/g, '');
  if (t.includes(',')) t = t.replace(/\./g, '').replace(',', '.');
  else if (/^\d{1,3}(\.\d{3})+$/.test(t)) t = t.replace(/\./g, '');
  return /^\d+(\.\d{1,2})?$/.test(t) ? t : null;
}
