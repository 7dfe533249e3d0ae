/** Pix received (sandbox_psp.pix) with their devoluções, and how the API Pix shows them. */

import { type DevolucaoRow, devolucaoJson } from './devolucao-store.ts';
import type { Queryable } from './sql.ts';
import { maybeOne, one, run, sql } from './sql.ts';
import type { Pix } from './types.ts';
import { compact, iso, valorOf } from './wire.ts';

export interface PixRow {
  end_to_end_id: string;
  txid: string | null;
  valor_cents: number;
  chave: string;
  horario: Date;
  info_pagador: string | null;
  pagador_cpf: string | null;
  pagador_cnpj: string | null;
}

export type NewPix = PixRow;

export async function insertPix(q: Queryable, p: NewPix): Promise<PixRow> {
  const r = await run<PixRow>(
    q,
    sql`INSERT INTO sandbox_psp.pix (end_to_end_id, txid, valor_cents, chave, horario, info_pagador, pagador_cpf, pagador_cnpj)
        VALUES (${p.end_to_end_id}, ${p.txid}, ${p.valor_cents}, ${p.chave}, ${p.horario}, ${p.info_pagador}, ${p.pagador_cpf}, ${p.pagador_cnpj})
        RETURNING *`,
  );
  return one(r);
}

export async function findPix(q: Queryable, e2eid: string, lock = false): Promise<PixRow | null> {
  const r = lock
    ? await run<PixRow>(q, sql`SELECT * FROM sandbox_psp.pix WHERE end_to_end_id = ${e2eid} FOR UPDATE`)
    : await run<PixRow>(q, sql`SELECT * FROM sandbox_psp.pix WHERE end_to_end_id = ${e2eid}`);
  return maybeOne(r);
}

async function devolucoesOf(q: Queryable, e2eids: string[]): Promise<Map<string, DevolucaoRow[]>> {
  const byPix = new Map<string, DevolucaoRow[]>();
  if (e2eids.length === 0) return byPix;
  const r = await run<DevolucaoRow>(q, sql`SELECT * FROM sandbox_psp.devolucoes WHERE end_to_end_id = ANY (${e2eids}::text[]) ORDER BY seq`);
  for (const d of r.rows) byPix.set(d.end_to_end_id, [...(byPix.get(d.end_to_end_id) ?? []), d]);
  return byPix;
}

/** The Pix as the API shows it, each with its devoluções (when it has any). */
export async function pixJsons(q: Queryable, rows: PixRow[]): Promise<Pix[]> {
  const devolucoes = await devolucoesOf(
    q,
    rows.map((r) => r.end_to_end_id),
  );
  return rows.map((row) => pixJson(row, devolucoes.get(row.end_to_end_id) ?? []));
}

export async function pixById(q: Queryable, e2eid: string): Promise<Pix | null> {
  const row = await findPix(q, e2eid);
  return row ? (await pixJsons(q, [row]))[0]! : null;
}

export async function pixOfTxid(q: Queryable, txid: string): Promise<Pix[]> {
  const r = await run<PixRow>(q, sql`SELECT * FROM sandbox_psp.pix WHERE txid = ${txid} ORDER BY horario, seq`);
  return pixJsons(q, r.rows);
}

function pixJson(row: PixRow, devolucoes: DevolucaoRow[]): Pix {
  const valor = valorOf(row.valor_cents);
  return compact({
    endToEndId: row.end_to_end_id,
    txid: row.txid ?? undefined,
    valor,
    componentesValor: { original: { valor } },
    chave: row.chave,
    horario: iso(row.horario),
    infoPagador: row.info_pagador ?? undefined,
    devolucoes: devolucoes.length > 0 ? devolucoes.map(devolucaoJson) : undefined,
  });
}

export interface PixFilter {
  inicio: Date;
  fim: Date;
  txid: string | null;
  txIdPresente: boolean | null;
  devolucaoPresente: boolean | null;
  cpf: string | null;
  cnpj: string | null;
}

/** One page of GET /pix, oldest first, and how many Pix match in all. */
export async function listPix(q: Queryable, f: PixFilter, page: number, perPage: number): Promise<{ total: number; rows: PixRow[] }> {
  const where = sql`p.horario >= ${f.inicio} AND p.horario <= ${f.fim}
    AND (${f.txid}::text IS NULL OR p.txid = ${f.txid}::text)
    AND (${f.txIdPresente}::boolean IS NULL OR (p.txid IS NOT NULL) = ${f.txIdPresente}::boolean)
    AND (${f.devolucaoPresente}::boolean IS NULL
      OR EXISTS (SELECT 1 FROM sandbox_psp.devolucoes d WHERE d.end_to_end_id = p.end_to_end_id) = ${f.devolucaoPresente}::boolean)
    AND (${f.cpf}::text IS NULL OR p.pagador_cpf = ${f.cpf}::text)
    AND (${f.cnpj}::text IS NULL OR p.pagador_cnpj = ${f.cnpj}::text)`;
  const total = one(await run<{ n: number }>(q, sql`SELECT count(*)::int AS n FROM sandbox_psp.pix p WHERE ${where}`)).n;
  const rows = await run<PixRow>(
    q,
    sql`SELECT p.* FROM sandbox_psp.pix p WHERE ${where} ORDER BY p.horario, p.seq LIMIT ${perPage} OFFSET ${page * perPage}`,
  );
  return { total, rows: rows.rows };
}
