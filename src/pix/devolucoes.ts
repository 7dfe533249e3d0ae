/**
 * What the devoluções of a confirmed Pix tell the gateway (CONTRACT §11.1): our refunds settled, our
 * returns done, and a MED's outcome (a devolução the payer's bank took by MED).
 */
import type { AppContext } from '../context.ts';
import { maybeOne } from '../db/sql.ts';
import type { Devolucao, Pix } from '../pix-rail/api-pix-client.ts';
import { settleRefund } from '../refunds/refund-moves.ts';
import { moveTransaction } from '../transactions/transitions.ts';
import { refundOutcomeOf } from './pix-charges.ts';

const MED_NATUREZAS = new Set(['MED_OPERACIONAL', 'MED_FRAUDE']);

/** Applies every devolução of `pix`; each is idempotent (a settled refund, a MED already lost, stay so). */
export async function applyDevolucoes(ctx: AppContext, pix: Pix): Promise<void> {
  for (const devolucao of pix.devolucoes ?? []) {
    if (MED_NATUREZAS.has(devolucao.natureza ?? '')) await medDevolucao(ctx, pix, devolucao);
    else if (/^rf\d+$/.test(devolucao.id)) await refundDevolucao(ctx, Number(devolucao.id.slice(2)), devolucao);
    else if (devolucao.id.startsWith('rt')) await returnDevolucao(ctx, pix, devolucao);
  }
}

async function refundDevolucao(ctx: AppContext, refundId: number, devolucao: Devolucao): Promise<void> {
  const outcome = refundOutcomeOf(devolucao);
  if (outcome.status === 'PENDING') return;
  const refund = maybeOne(await ctx.db.query<{ status: string }>('SELECT status FROM refunds WHERE id = $1', [refundId]));
  if (refund?.status === 'PENDING') await settleRefund(ctx.db, refundId, outcome, ctx.clock.now());
}

async function returnDevolucao(ctx: AppContext, pix: Pix, devolucao: Devolucao): Promise<void> {
  await ctx.db.query(
    "UPDATE pix_received SET return_status = $3, return_detail = $4 WHERE end_to_end_id = $1 AND return_id = $2 AND return_status <> 'DEVOLVIDO'",
    [pix.endToEndId, devolucao.id, devolucao.status, devolucao.motivo ?? null],
  );
}

/**
 * The money went back to the payer by MED: the sale's MED is lost (on a PAGO sale, opened first).
 * Refused moves (a refund of the sale still PENDING) are left for the next reconciliation.
 */
async function medDevolucao(ctx: AppContext, pix: Pix, devolucao: Devolucao): Promise<void> {
  if (devolucao.status !== 'DEVOLVIDO') return;
  const sale = maybeOne(
    await ctx.db.query<{ id: number; status: string }>('SELECT id, status FROM transactions WHERE pix_end_to_end_id = $1', [pix.endToEndId]),
  );
  if (!sale) return;
  const at = ctx.clock.now();
  if (sale.status === 'PAGO' && (await moveTransaction(ctx.db, sale.id, 'MED_OPENED', at)).kind !== 'moved') return;
  if (sale.status === 'PAGO' || sale.status === 'MED') await moveTransaction(ctx.db, sale.id, 'MED_LOST', at);
}
