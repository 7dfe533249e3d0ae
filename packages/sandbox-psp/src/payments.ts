/**
 * A Pix arriving as the SPI would deliver it (a pacs.008 for the receiver's key). The money is in
 * whatever the charge says: a Pix for a charge that was removed, paid already, expired, or of
 * another amount is still received, and it is the receiver's job to give it back.
 */

import { concludeCob, findCob, isExpired } from './cob-store.ts';
import { insertPix } from './pix-store.ts';
import type { Db } from './sql.ts';
import type { PayOptions, PspClock } from './types.ts';
import { newEndToEndId, PIX_TXID_RE } from './wire.ts';

// "\d{1,10}\.\d{2}": at most 12 digits of cents.
const MAX_CENTS = 999_999_999_999;

function checkPayment(txid: string, amountCents: number, options: PayOptions): void {
  if (!PIX_TXID_RE.test(txid)) throw new RangeError(`pay: txid ${JSON.stringify(txid)} is not 1–35 of [a-zA-Z0-9]`);
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0 || amountCents > MAX_CENTS) {
    throw new RangeError(`pay: amountCents ${amountCents} is not a positive amount of cents`);
  }
  if (options.infoPagador !== undefined && options.infoPagador.length > 140) throw new RangeError('pay: infoPagador is longer than 140 characters');
  const p = options.pagador;
  if (p && 'cpf' in p && !/^\d{11}$/.test(p.cpf)) throw new RangeError('pay: pagador.cpf must be 11 digits');
  if (p && 'cnpj' in p && !/^[0-9A-Z]{14}$/.test(p.cnpj)) throw new RangeError('pay: pagador.cnpj must be 14 characters [0-9A-Z]');
}

/** Stores the Pix (and concludes the charge it pays, if it does); answers its endToEndId. */
export async function receivePix(
  db: Db,
  clock: PspClock,
  receiverKey: string,
  txid: string,
  amountCents: number,
  options: PayOptions,
): Promise<string> {
  checkPayment(txid, amountCents, options);
  return db.tx(async (q) => {
    const now = clock.now();
    const cob = await findCob(q, txid, true);
    const pays = cob?.status === 'ATIVA' && !isExpired(cob, now) && (cob.modalidade_alteracao === 1 || cob.original_cents === amountCents);
    if (pays) await concludeCob(q, txid);
    const pagador = options.pagador;
    const row = await insertPix(q, {
      end_to_end_id: newEndToEndId(now),
      txid,
      valor_cents: amountCents,
      chave: cob?.chave ?? receiverKey,
      horario: now,
      info_pagador: options.infoPagador ?? null,
      pagador_cpf: pagador && 'cpf' in pagador ? pagador.cpf : null,
      pagador_cnpj: pagador && 'cnpj' in pagador ? pagador.cnpj : null,
    });
    return row.end_to_end_id;
  });
}
