/**
 * The PSP's record of an API Pix account (CONTRACT §15): the Pix received in a window (`GET /pix`,
 * every page) with the devoluções made of each, and, for devoluções of Pix received on other days
 * (a refund a week after the sale), those Pix read one by one (`GET /pix/{e2eid}`).
 */
import type { ProviderMovement, RecordReader } from '../record.ts';
import { type ApiPixClient, ApiPixError, centsFromValor, type Pix } from './client/api-pix-client.ts';

const page_size = 1_000;

/** A received Pix and its devoluções that moved money, as movements of the account. */
export function movementsOfPix(pix: Pix, devolucoesOnly = false): ProviderMovement[] {
  const received: ProviderMovement = {
    id: `pix:${pix.endToEndId}`,
    kind: 'PIX_RECEIVED',
    reference: pix.endToEndId,
    amount: centsFromValor(pix.valor),
    at: new Date(pix.horario),
    detail: { txid: pix.txid ?? null },
  };
  // A devolução under way or not made moved no money.
  const returned = (pix.devolucoes ?? [])
    .filter((d) => d.status === 'DEVOLVIDO')
    .map(
      (d): ProviderMovement => ({
        id: `devolucao:${d.rtrId}`,
        kind: 'PIX_DEVOLUCAO',
        reference: d.rtrId,
        amount: -centsFromValor(d.valor),
        at: new Date(d.horario.liquidacao ?? d.horario.solicitacao ?? pix.horario),
        detail: { endToEndId: pix.endToEndId, devolucaoId: d.id, natureza: d.natureza ?? null },
      }),
    );
  return devolucoesOnly ? returned : [received, ...returned];
}

export function pixRecord(client: ApiPixClient): RecordReader {
  return async function* (window) {
    let page: ProviderMovement[] = [];
    for await (const pix of client.allPix({ inicio: window.from, fim: window.to })) {
      // A devolução of a Pix of the window may settle after it: the caller keeps what falls in its own window.
      page.push(...movementsOfPix(pix));
      if (page.length >= page_size) {
        yield page;
        page = [];
      }
    }
    if (page.length > 0) yield page;
  };
}

/** The devoluções of these Pix, read one by one; a Pix the PSP does not know has none. */
export async function devolucoesOf(client: ApiPixClient, endToEndIds: string[]): Promise<ProviderMovement[]> {
  const found: ProviderMovement[] = [];
  for (const e2e of endToEndIds) {
    try {
      found.push(...movementsOfPix(await client.getPix(e2e), true));
    } catch (error) {
      if (!(error instanceof ApiPixError && error.status === 404)) throw error;
    }
  }
  return found;
}
