/**
 * Extrato: the seller's journal as a statement, newest first, with the available balance after each
 * line, and the whole of it as CSV (CONTRACT §12). Both are read from the journal itself.
 */
import { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import { saoPauloDate } from '../domain/calendar.ts';
import { centsToReaisString } from '../domain/money.ts';
import type { Router } from '../http/router.ts';
import { reais, whenSaoPaulo } from './format.ts';
import { cursorOf, ListPage, page, pageSession } from './session.ts';
import { type Entry, entriesOf } from './statement-entries.ts';
import { postingsPage } from './statement-read.ts';

const page_size = 50;
const csv_batch = 1_000;

export function statementPages(app: Router, ctx: AppContext): void {
  app.get('/painel/extrato', { schema: { hide: true, querystring: ListPage } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    const read = await postingsPage(ctx.db, current.session.sellerId, cursorOf(request.query.antes), page_size + 1);
    const shown = read.postings.slice(0, page_size);
    return page(reply, 200, 'extrato.eta', {
      title: 'Extrato',
      page: 'extrato',
      session: current.session,
      lines: entriesOf(shown, read.availableAfter).map((e) => ({
        when: whenSaoPaulo(e.at),
        text: e.text,
        detail: e.detail,
        amount: e.amount === 0 ? '—' : reais(e.amount),
        negative: e.amount < 0,
        balance: reais(e.balance),
        sale: e.sale,
        cashout: e.cashout,
      })),
      next: read.postings.length > page_size ? `/painel/extrato?antes=${shown.at(-1)!.id}` : null,
    });
  });

  app.get('/painel/extrato.csv', { schema: { hide: true } }, async (request, reply) => {
    const current = await pageSession(ctx, request, reply);
    if (!current) return reply;
    // The first batch before any header: a database that is down gets its error page, not a cut file.
    const first = await postingsPage(ctx.db, current.session.sellerId, null, csv_batch);
    const day = saoPauloDate(ctx.clock.now());
    return reply
      .type('text/csv; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="extrato-${day}.csv"`)
      .send(Readable.from(csvRows(ctx, current.session.sellerId, first)));
  });
}

const csv_header = 'lancamento;data;descricao;detalhe;venda;saque;valor;saldo_disponivel\r\n';
const csvMoney = (cents: number) => centsToReaisString(cents).replace('.', ',');
// Semicolons and a decimal comma: what a spreadsheet set to Portuguese (Brazil) opens as columns.
// Our own words only, never seller text, and none holds a semicolon, a quote or a line break.
const csvLine = (e: Entry) =>
  [e.posting, whenSaoPaulo(e.at), e.text, e.detail ?? '', e.sale ?? '', e.cashout ?? '', csvMoney(e.amount), csvMoney(e.balance)].join(';');

/**
 * The whole statement, a batch of postings at a time, so a long history never sits in memory at
 * once. The balance runs on from batch to batch: each line's is the next one's plus its amount.
 */
async function* csvRows(ctx: AppContext, sellerId: number, first: Awaited<ReturnType<typeof postingsPage>>): AsyncGenerator<string> {
  yield `\ufeff${csv_header}`;
  let balance = first.availableAfter;
  // Ids only go down, so the batches end; a partial batch is the last.
  for (let rows = first.postings; rows.length > 0; ) {
    const entries = entriesOf(rows, balance);
    yield `${entries.map(csvLine).join('\r\n')}\r\n`;
    balance = entries.at(-1)!.balance - entries.at(-1)!.amount;
    if (rows.length < csv_batch) return;
    rows = (await postingsPage(ctx.db, sellerId, rows.at(-1)!.id, csv_batch)).postings;
  }
}
