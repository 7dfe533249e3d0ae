/**
 * What the devoluções of a confirmed Pix tell the gateway (CONTRACT §11.1): our refunds settled, our
 * returns done, and a MED's outcome (a devolução the payer's bank took by MED).
 */
import type { AppContext } from '../context.ts';
import { maybeOne } from '../db/sql.ts';
import type { Devolucao, Pix } from '../pix-rail/api-pix-client.ts';
import { settleRefund } from '../refunds/refund-moves.ts';
import { moveTransaction } from '../transactions/transitions.ts';
import { refundOutcomeOf, returnDevolucaoId } from './pix-charges.ts';
import { recordReturn } from './received-pix.ts';

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
  // Only the return the gateway asked for: another devolução of this Pix is not ours to record.
  if (devolucao.id === returnDevolucaoId(pix.endToEndId)) await recordReturn(ctx.db, pix.endToEndId, devolucao.status, devolucao.motivo ?? null);
}

/**
 * The money went back to the payer by MED: recorded once, then applied (the sale's MED is lost; on
 * a PAGO sale it is opened first). A sale that cannot move now (a refund of it PENDING) keeps the
 * record open, and reconciliation applies it later (applyOpenMeds).
 */
async function medDevolucao(ctx: AppContext, pix: Pix, devolucao: Devolucao): Promise<void> {
  if (devolucao.status !== 'DEVOLVIDO') return;
  await ctx.db.query('INSERT INTO pix_med_devolucoes (end_to_end_id, devolucao_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
    pix.endToEndId,
    devolucao.id,
    ctx.clock.now(),
  ]);
  await applyMed(ctx, pix.endToEndId, devolucao.id);
}

/** Applies a recorded MED devolução if its sale can move; true once nothing is left to do. */
async function applyMed(ctx: AppContext, endToEndId: string, devolucaoId: string): Promise<boolean> {
  const sale = maybeOne(
    await ctx.db.query<{ id: number; status: string }>('SELECT id, status FROM transactions WHERE pix_end_to_end_id = $1', [endToEndId]),
  );
  const at = ctx.clock.now();
  let done = !sale || (sale.status !== 'PAGO' && sale.status !== 'MED');
  if (sale && !done) {
    const opened = sale.status === 'MED' || (await moveTransaction(ctx.db, sale.id, 'MED_OPENED', at)).kind !== 'refused';
    done = opened && (await moveTransaction(ctx.db, sale.id, 'MED_LOST', at)).kind !== 'refused';
  }
  if (done) {
    await ctx.db.query('UPDATE pix_med_devolucoes SET applied_at = $3 WHERE end_to_end_id = $1 AND devolucao_id = $2 AND applied_at IS NULL', [
      endToEndId,
      devolucaoId,
      at,
    ]);
  }
  return done;
}

/** The MED devoluções still waiting for their sale (reconciliation). */
export async function applyOpenMeds(ctx: AppContext, limit: number): Promise<void> {
  const open = await ctx.db.query<{ end_to_end_id: string; devolucao_id: string }>(
    'SELECT end_to_end_id, devolucao_id FROM pix_med_devolucoes WHERE applied_at IS NULL ORDER BY created_at LIMIT $1',
    [limit],
  );
  for (const med of open.rows) await applyMed(ctx, med.end_to_end_id, med.devolucao_id);
}
