/**
 * A Pix the PSP says it received (confirmed by the PSP's own API, never a callback body alone),
 * applied once per endToEndId (CONTRACT §11.1): it pays its PENDENTE sale of exactly that amount,
 * or it is returned whole by a devolução.
 */
import type { AppContext } from '../context.ts';
import type { Queryable } from '../db/db.ts';
import { maybeOne } from '../db/sql.ts';
import { type ApiPixClient, centsFromValor, type Pix, valorFromCents } from '../pix-rail/api-pix-client.ts';
import { moveTransaction } from '../transactions/transitions.ts';
import { returnDevolucaoId } from './pix-charges.ts';

type Decision = { kind: 'pay'; saleId: number } | { kind: 'return'; reason: string; saleId: number | null };

/** Why a Pix cannot pay the sale its txid names; null when it pays it. */
function decide(sale: { id: number; status: string; amount: number } | null, amount: number): Decision {
  if (!sale) return { kind: 'return', reason: 'no sale has this txid', saleId: null };
  if (sale.status !== 'PENDENTE') return { kind: 'return', reason: `the sale is ${sale.status}`, saleId: sale.id };
  if (sale.amount !== amount) return { kind: 'return', reason: `${amount} cents for a sale of ${sale.amount}`, saleId: sale.id };
  return { kind: 'pay', saleId: sale.id };
}

/** Applies a confirmed Pix; a Pix seen before changes nothing. Answers what happened. */
export async function applyReceivedPix(ctx: AppContext, pix: Pix): Promise<'paid' | 'returned' | 'seen'> {
  const amount = centsFromValor(pix.valor);
  const at = ctx.clock.now();
  const outcome = await ctx.db.tx(async (q) => {
    // The sale row is locked first: a cancellation or expiry racing this Pix waits, or this Pix sees its result.
    const sale = pix.txid
      ? maybeOne(
          await q.query<{ id: number; status: string; amount: number }>(
            "SELECT id, status, amount FROM transactions WHERE pix_txid = $1 AND payment_method = 'PIX' FOR UPDATE",
            [pix.txid],
          ),
        )
      : null;
    const decision = decide(sale, amount);
    if (!(await recordOnce(q, pix, amount, decision, at))) return 'seen' as const;
    if (decision.kind === 'return') return 'returned' as const;
    const moved = await moveTransaction(q, decision.saleId, 'PAYMENT_CONFIRMED', at);
    if (moved.kind !== 'moved') throw new Error(`sale ${decision.saleId}: PENDENTE and locked, yet not paid (${moved.kind})`);
    await q.query('UPDATE transactions SET pix_end_to_end_id = $2 WHERE id = $1', [decision.saleId, pix.endToEndId]);
    return 'paid' as const;
  });
  // Recorded TO_SEND: if the PSP cannot be reached now, reconciliation sends it again.
  if (outcome === 'returned') await sendReturn(ctx.pix.client, ctx.db, pix.endToEndId, amount).catch(() => {});
  return outcome;
}

async function recordOnce(q: Queryable, pix: Pix, amount: number, d: Decision, at: Date): Promise<boolean> {
  const returned = d.kind === 'return';
  const r = await q.query(
    `INSERT INTO pix_received (end_to_end_id, txid, amount, paid_at, transaction_id, outcome, return_reason, return_id, return_status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (end_to_end_id) DO NOTHING`,
    [
      pix.endToEndId,
      pix.txid ?? null,
      amount,
      new Date(pix.horario),
      d.saleId,
      returned ? 'RETURNED' : 'PAID',
      returned ? d.reason : null,
      returned ? returnDevolucaoId(pix.endToEndId) : null,
      returned ? 'TO_SEND' : null,
      at,
    ],
  );
  return r.rowCount === 1;
}

/**
 * Asks the PSP to return a Pix whole. Idempotent by our devolução id, so it is simply sent again
 * (by reconciliation) until the PSP has it; throws when the PSP could not be reached.
 */
export async function sendReturn(client: ApiPixClient, q: Queryable, endToEndId: string, amount: number): Promise<void> {
  const devolucao = await client.putDevolucao(endToEndId, returnDevolucaoId(endToEndId), {
    valor: valorFromCents(amount),
    natureza: 'ORIGINAL',
    descricao: 'Pix devolvido: a cobrança não aceita este pagamento',
  });
  await recordReturn(q, endToEndId, devolucao.status, devolucao.motivo ?? null);
}

/** What the PSP says of a return (or why it will not make it); a return DEVOLVIDO stays so. */
export async function recordReturn(q: Queryable, endToEndId: string, status: string, detail: string | null): Promise<void> {
  await q.query("UPDATE pix_received SET return_status = $2, return_detail = $3 WHERE end_to_end_id = $1 AND return_status <> 'DEVOLVIDO'", [
    endToEndId,
    status,
    detail,
  ]);
}
