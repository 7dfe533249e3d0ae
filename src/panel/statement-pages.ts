/** Extrato: the seller's journal lines, newest first, and the whole of it as CSV (CONTRACT §12). */
import { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import { saoPauloDate } from '../domain/calendar.ts';
import { centsToReaisString } from '../domain/money.ts';
import type { Router } from '../http/router.ts';
import { type StatementLine, statementLines } from '../ledger/statement.ts';
import { reais, whenSaoPaulo } from './format.ts';
import { cursorOf, ListPage, page, pageSession } from './session.ts';

const page_size = 50;
const csv_batch = 1_000;

const kind_names: Record<string, string> = {
  FIRST_PAYMENT: 'Venda paga',
  REFUND: 'Estorno',
  REFUND_REQUESTED: 'Estorno pedido',
  REFUND_SUCCEEDED: 'Estorno concluído',
  REFUND_FAILED: 'Estorno não realizado',
  MED_OPENED: 'MED aberta',
  MED_WON: 'MED ganha',
  MED_LOST: 'MED perdida',
  CHARGEBACK_OPENED: 'Chargeback aberto',
  CHARGEBACK_REVERTED: 'Chargeback revertido',
  CHARGEBACK_CONFIRMED: 'Chargeback confirmado',
  RESERVE_RELEASE: 'Reserva liberada',
  CASHOUT_CREATED: 'Saque pedido',
  CASHOUT_COMPLETED: 'Saque concluído',
  CASHOUT_REJECTED: 'Saque recusado',
  CASHOUT_CANCELLED: 'Saque cancelado',
};
const bucket_names = { available: 'Disponível', blocked: 'Bloqueado' } as const;
const kindName = (kind: string) => kind_names[kind] ?? kind;

export function statementPages(app: Router, ctx: AppContext): void {
  app.get('/painel/extrato', { schema: { hide: true, querystring: ListPage } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    const rows = await statementLines(ctx.db, current.session.sellerId, cursorOf(request.query.antes), page_size + 1);
    const shown = rows.slice(0, page_size);
    return page(reply, 200, 'extrato.eta', {
      title: 'Extrato',
      page: 'extrato',
      session: current.session,
      lines: shown.map((l) => ({
        when: whenSaoPaulo(l.created_at),
        bucket: bucket_names[l.account],
        kind: kindName(l.kind),
        amount: reais(l.amount),
        negative: l.amount < 0,
        sale: l.transaction_id,
        cashout: l.cashout_id,
      })),
      next: rows.length > page_size ? `/painel/extrato?antes=${shown.at(-1)!.id}` : null,
    });
  });

  app.get('/painel/extrato.csv', { schema: { hide: true } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    // The first batch before any header: a database that is down gets its error page, not a cut file.
    const first = await statementLines(ctx.db, current.session.sellerId, null, csv_batch);
    const day = saoPauloDate(ctx.clock.now());
    return reply
      .type('text/csv; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="extrato-${day}.csv"`)
      .send(Readable.from(csvRows(ctx, current.session.sellerId, first)));
  });
}

const csv_header = 'lancamento;data;conta;tipo;codigo;valor;venda;saque\r\n';
// Semicolons and a decimal comma: what a spreadsheet set to Portuguese (Brazil) opens as columns.
// No field needs quoting: every one is a number, a date or a fixed word of ours, never seller text.
const csvLine = (l: StatementLine) =>
  [
    l.id,
    whenSaoPaulo(l.created_at),
    bucket_names[l.account],
    kindName(l.kind),
    l.kind,
    centsToReaisString(l.amount).replace('.', ','),
    l.transaction_id ?? '',
    l.cashout_id ?? '',
  ].join(';');

/** The whole statement, a batch at a time, so a long history never sits in memory at once. */
async function* csvRows(ctx: AppContext, sellerId: number, first: StatementLine[]): AsyncGenerator<string> {
  yield `\ufeff${csv_header}`;
  // Ids only go down, so the batches end; a partial batch is the last.
  for (let rows = first; rows.length > 0; ) {
    yield `${rows.map(csvLine).join('\r\n')}\r\n`;
    if (rows.length < csv_batch) return;
    rows = await statementLines(ctx.db, sellerId, rows.at(-1)!.id, csv_batch);
  }
}
