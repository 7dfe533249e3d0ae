/** Devoluções (sandbox_psp.devolucoes) and how the API Pix shows them. */
import type { Queryable } from './sql.ts';
import { maybeOne, one, run, sql } from './sql.ts';
import type { Devolucao, DevolucaoNatureza, DevolucaoStatus } from './types.ts';
import { compact, iso, valorOf } from './wire.ts';

export interface DevolucaoRow {
  end_to_end_id: string;
  id: string;
  rtr_id: string;
  valor_cents: number;
  natureza: DevolucaoNatureza;
  descricao: string | null;
  status: DevolucaoStatus;
  motivo: string | null;
  solicitacao: Date;
  liquidacao: Date | null;
  settle_at: Date;
  planned_failure: string | null;
  request_canonical: string;
}

export type NewDevolucao = Omit<DevolucaoRow, 'liquidacao' | 'motivo'> & { liquidacao?: Date | null };

export async function insertDevolucao(q: Queryable, d: NewDevolucao): Promise<DevolucaoRow> {
  const r = await run<DevolucaoRow>(
    q,
    sql`INSERT INTO sandbox_psp.devolucoes (end_to_end_id, id, rtr_id, valor_cents, natureza, descricao, status, solicitacao,
          liquidacao, settle_at, planned_failure, request_canonical)
        VALUES (${d.end_to_end_id}, ${d.id}, ${d.rtr_id}, ${d.valor_cents}, ${d.natureza}, ${d.descricao}, ${d.status}, ${d.solicitacao},
          ${d.liquidacao ?? null}, ${d.settle_at}, ${d.planned_failure}, ${d.request_canonical})
        RETURNING *`,
  );
  return one(r);
}

export async function findDevolucao(q: Queryable, e2eid: string, id: string): Promise<DevolucaoRow | null> {
  return maybeOne(await run<DevolucaoRow>(q, sql`SELECT * FROM sandbox_psp.devolucoes WHERE end_to_end_id = ${e2eid} AND id = ${id}`));
}

/** Cents already given back or on their way: a devolução NAO_REALIZADO returned nothing. */
export async function committedCents(q: Queryable, e2eid: string): Promise<number> {
  const r = await run<{ n: number }>(
    q,
    sql`SELECT coalesce(sum(valor_cents), 0)::bigint AS n FROM sandbox_psp.devolucoes
        WHERE end_to_end_id = ${e2eid} AND status <> 'NAO_REALIZADO'`,
  );
  return Number(one(r).n);
}

/**
 * EM_PROCESSAMENTO → DEVOLVIDO (or NAO_REALIZADO with its planned motivo). Only the caller that
 * makes the change gets the row back, so two processes on one database settle each devolução once.
 */
export async function settleDevolucao(q: Queryable, e2eid: string, id: string, now: Date): Promise<DevolucaoRow | null> {
  const r = await run<DevolucaoRow>(
    q,
    sql`UPDATE sandbox_psp.devolucoes
        SET status = CASE WHEN planned_failure IS NULL THEN 'DEVOLVIDO' ELSE 'NAO_REALIZADO' END,
            motivo = planned_failure,
            liquidacao = CASE WHEN planned_failure IS NULL THEN ${now}::timestamptz END
        WHERE end_to_end_id = ${e2eid} AND id = ${id} AND status = 'EM_PROCESSAMENTO'
        RETURNING *`,
  );
  return maybeOne(r);
}

export async function pendingDevolucoes(q: Queryable): Promise<Array<Pick<DevolucaoRow, 'end_to_end_id' | 'id' | 'settle_at'>>> {
  const r = await run<DevolucaoRow>(
    q,
    sql`SELECT end_to_end_id, id, settle_at FROM sandbox_psp.devolucoes WHERE status = 'EM_PROCESSAMENTO' ORDER BY settle_at`,
  );
  return r.rows;
}

export function devolucaoJson(row: DevolucaoRow): Devolucao {
  return compact({
    id: row.id,
    rtrId: row.rtr_id,
    valor: valorOf(row.valor_cents),
    natureza: row.natureza,
    descricao: row.descricao ?? undefined,
    horario: compact({ solicitacao: iso(row.solicitacao), liquidacao: row.liquidacao ? iso(row.liquidacao) : undefined }),
    status: row.status,
    motivo: row.motivo ?? undefined,
  });
}
