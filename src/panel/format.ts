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
