/** PUT, PATCH and GET /cob/{txid}: immediate charges with a location and a dynamic BR Code. */
import type { FastifyInstance } from 'fastify';
import { dynamicBrCode, type Merchant } from './brcode.ts';
import {
  type CobRow,
  cobJson,
  fieldsOf,
  findCob,
  findRevision,
  insertCob,
  insertCobInGroup,
  type NewCob,
  reviseCob,
  saveRevision,
} from './cob-store.ts';
import { type CobFields, checkAmount, checkCobRevisada, checkCobSolicitada } from './cob-validate.ts';
import { sortedJson } from './encoders.ts';
import { LOCATION_PATH } from './location.ts';
import { pixOfTxid } from './pix-store.ts';
import { notFound, problem, type Violacao } from './problems.ts';
import type { Db, Queryable } from './sql.ts';
import type { PspClock } from './types.ts';
import { COB_TXID_RE, newLocationToken } from './wire.ts';

export interface CobRouteOptions {
  db: Db;
  clock: PspClock;
  receiverKey: string;
  merchant: Merchant;
  /** host:port of locations, known once the server listens. */
  publicHost(): string;
}

const cobInvalida = (violacoes: Violacao[]) =>
  problem(
    400,
    'CobOperacaoInvalida',
    'Cobrança inválida.',
    'A requisição que busca alterar ou criar uma cobrança para pagamento imediato não respeita o schema ou está semanticamente errada.',
    violacoes,
  );

const cobNaoEncontrada = () => notFound('CobNaoEncontrado', 'Cobrança não encontrada para o txid informado.');
const sameFields = (a: CobFields, b: CobFields) => sortedJson(a) === sortedJson(b);
const notAtiva = (verb: string) =>
  cobInvalida([{ razao: `A cobrança não está ATIVA, e a presente requisição busca ${verb}-la.`, propriedade: 'cob.status' }]);

/** The charge with the Pix received for its txid (CobCompleta). */
async function cobWithPix(q: Queryable, row: CobRow): Promise<Record<string, unknown>> {
  const pix = await pixOfTxid(q, row.txid);
  return pix.length > 0 ? { ...cobJson(row), pix } : cobJson(row);
}

export function registerCobRoutes(app: FastifyInstance, o: CobRouteOptions): void {
  app.put<{ Params: { txid: string } }>('/cob/:txid', { config: { scope: 'cob.write' } }, async (request, reply) => {
    const { txid } = request.params;
    if (!COB_TXID_RE.test(txid))
      throw cobInvalida([{ razao: 'O txid deve ter de 26 a 35 caracteres [a-zA-Z0-9].', propriedade: 'txid', valor: txid }]);
    const checked = checkCobSolicitada(request.body, o.receiverKey);
    if (!checked.ok) throw cobInvalida(checked.violacoes);
    // A new txid, the usual case, is one statement shared with the charges made meanwhile (no
    // transaction, no Pix to look for: none can be of a charge made this instant); one that exists
    // is revised, or answered as it is, under its lock.
    const created = await insertCobInGroup(o.db, newCob(o, txid, checked.value));
    if (created) return reply.status(201).send(cobJson(created));
    const row = await o.db.tx((q) => putCob(q, o, txid, checked.value));
    return reply.status(201).send(await cobWithPix(o.db, row));
  });

  app.patch<{ Params: { txid: string } }>('/cob/:txid', { config: { scope: 'cob.write' } }, async (request) => {
    const { txid } = request.params;
    if (!COB_TXID_RE.test(txid)) throw cobNaoEncontrada();
    const checked = checkCobRevisada(request.body, o.receiverKey);
    if (!checked.ok) throw cobInvalida(checked.violacoes);
    const { remove, changes } = checked.value;
    const row = await o.db.tx(async (q) => {
      const existing = await findCob(q, txid, true);
      if (!existing) throw cobNaoEncontrada();
      // Removing what the receiver already removed changes nothing: answered as is, so a retried PATCH is harmless.
      if (remove && existing.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR') return existing;
      if (existing.status !== 'ATIVA') throw notAtiva('alterá');
      if (remove) return revise(q, existing, fieldsOf(existing), 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
      const merged = checkAmount({ ...fieldsOf(existing), ...changes });
      if (!merged.ok) throw cobInvalida(merged.violacoes);
      return sameFields(merged.value, fieldsOf(existing)) ? existing : revise(q, existing, merged.value, 'ATIVA');
    });
    return cobWithPix(o.db, row);
  });

  app.get<{ Params: { txid: string }; Querystring: { revisao?: string } }>('/cob/:txid', { config: { scope: 'cob.read' } }, async (request) => {
    const { txid } = request.params;
    const row = COB_TXID_RE.test(txid) ? await findCob(o.db, txid) : null;
    if (!row) throw cobNaoEncontrada();
    const asked = request.query.revisao;
    if (asked === undefined || asked === String(row.revisao)) return cobWithPix(o.db, row);
    const old = /^\d{1,9}$/.test(asked) ? await findRevision(o.db, txid, Number(asked)) : null;
    if (!old) {
      throw problem(400, 'CobConsultaInvalida', 'Consulta inválida.', 'O parâmetro revisao corresponde a uma revisão inexistente para a cobrança.', [
        { razao: 'Revisão inexistente para a cobrança.', propriedade: 'revisao', valor: asked },
      ]);
    }
    return old;
  });
}

function newCob(o: CobRouteOptions, txid: string, fields: CobFields): NewCob {
  const criacao = o.clock.now();
  const locToken = newLocationToken();
  const location = `${o.publicHost()}${LOCATION_PATH}${locToken}`;
  return { txid, fields, criacao, locToken, location, pixCopiaECola: dynamicBrCode(location, o.merchant) };
}

/**
 * A charge that exists (or was made meanwhile by a concurrent PUT): the same request again answers
 * it as stored. The file lets PUT alter a charge that is still ATIVA (a new revision) and refuses to
 * alter one that is not.
 */
async function putCob(q: Queryable, o: CobRouteOptions, txid: string, fields: CobFields): Promise<CobRow> {
  const existing = (await findCob(q, txid, true)) ?? (await insertCob(q, newCob(o, txid, fields)));
  if (!existing) throw new Error(`charge ${txid}: neither found nor made`);
  if (sameFields(fields, fieldsOf(existing))) return existing;
  if (existing.status !== 'ATIVA') throw notAtiva('alterá');
  return revise(q, existing, fields, 'ATIVA');
}

/** The superseded revision is kept as it was answered (a charge's current revision is its row). */
async function revise(q: Queryable, existing: CobRow, fields: CobFields, status: CobRow['status']): Promise<CobRow> {
  await saveRevision(q, existing);
  return reviseCob(q, existing.txid, fields, status);
}
