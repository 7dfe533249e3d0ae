/**
 * Efí's infractions as the PIX port's infraction source (CONTRACT §11.5): each listed infraction a
 * provider fact, identified by its id and status (a status seen again is a repeat), and the defence.
 */
import type { InfractionStatus, ProviderFact } from '../../domain/provider-facts.ts';
import { isRefusal } from '../api-pix/client/api-pix-client.ts';
import type { InfractionSource } from '../ports.ts';
import type { EfiInfraction, EfiInfractionsClient } from './infractions-client.ts';

const status_of: Record<EfiInfraction['status'], InfractionStatus> = {
  ABERTA: 'ABERTA',
  EM_DEFESA: 'EM_DEFESA',
  ACEITA: 'ACEITA',
  REJEITADA: 'REJEITADA',
  CANCELADA_EFI: 'CANCELADA',
};

const defence_refusals = new Set([400, 409, 422]);

/** Digits only, never a float: 147.02 → 14702. */
const centsOf = (reais: number) => Math.round(reais * 100);

export function infractionFact(i: EfiInfraction, account: string): ProviderFact {
  const status = status_of[i.status];
  return {
    provider: 'api-pix',
    identity: `infracao/${i.idInfracao}:${status}`,
    externalReference: i.idInfracao,
    fact: {
      kind: 'INFRACTION',
      // The Pix it contests names the sale (whichever connector sold it: a boleto's Pix too).
      sale: { ids: [i.endToEndId], saleId: null, referenceSuffices: false },
      infractionId: i.idInfracao,
      endToEndId: i.endToEndId,
      account,
      status,
      amount: centsOf(i.valor),
      reason: i.razao,
      openedAt: i.abertura ?? i.criadoEm,
      deadline: i.prazoFinalizacao,
      defense: i.defesa,
    },
    source: { idInfracao: i.idInfracao, endToEndId: i.endToEndId, status: i.status, razao: i.razao },
  };
}

export function efiInfractionSource(client: EfiInfractionsClient, account: string): InfractionSource {
  return {
    async *pages(window) {
      for await (const page of client.infractionPages(window)) yield page.map((i) => infractionFact(i, account));
    },
    async defend(infractionId, justification) {
      try {
        await client.defend(infractionId, justification);
        return { ok: true };
      } catch (error) {
        // Only the PSP's word on the defence itself is a refusal; a credential or route fault (401, 403, 404) is ours to mend, and it is sent again.
        if (!isRefusal(error) || !defence_refusals.has(error.status!)) throw error;
        const p = error.problem;
        return { ok: false, reason: p?.detail ?? p?.mensagem ?? p?.title ?? `HTTP ${error.status}` };
      }
    },
  };
}
